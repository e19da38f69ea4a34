// Fault localisation at scale, in simulated time: one job's fault tree of
// 1,000 and 10,000 nodes in one process, each node the daemon's own
// FaultLocaliser (TFD, TFA with the built-in rules, heartbeats) over a
// simulated network with delay and loss (fault_tree_sim.h).
//
//   fault_tree_sim_bench [--nodes 1000,10000] [--trials 20] [--json] ... (--help)
//
// Per size, one warm-up (every node heartbeats to its FLN), then per
// scenario and trial a random victim from the warm-up's end state:
//   leaf crash    a node without children dies (its daemon answers nothing)
//   inner crash   a node with children dies (the root too, now and then)
//   process hang  a node's rank is stopped; its daemon's LocalRankWatch
//                 raises heartbeat_lost about it, as on a real node
//   fault-free    nothing happens, for as long: every report is false
// Measured per trial, in virtual time: when the first report about the
// victim reaches the node that publishes (the root, or the acting root when
// the root died), whether it names the right node and kind, reports about
// other nodes, the forwarded symptoms and published faults that reach the
// root until that report + 1 s, and every fault message any node sends
// (forwards, publishes, probe attempts) from the fault to the end.
//
// A size whose run would take more memory or wall time than the limits is
// skipped with the estimate (measured on a few localisers) and the reason.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fault_tree_sim.h"

namespace {

using namespace nk;
using namespace nk::faultsim;
using Clock = std::chrono::steady_clock;

constexpr const char* kUsage =
    "usage: fault_tree_sim_bench [--nodes LIST] [--trials N] [--seed S] [--fanout K]\n"
    "                            [--loss P] [--delay-us US] [--jitter exp|uniform]\n"
    "                            [--warmup-s S] [--after-s S] [--scenarios LIST] [--victim I]\n"
    "                            [--max-memory-gb G] [--max-wall-s S] [--force] [--json]\n"
    "\n"
    "Simulates one job's fault localisation tree, one FaultLocaliser per node, in\n"
    "virtual time, and prints localisation time, correctness, false reports and\n"
    "message counts per scenario.\n"
    "  --nodes LIST       tree sizes (default 1000,10000)\n"
    "  --trials N         trials per scenario and size (default 20)\n"
    "  --seed S           base seed (default 1)\n"
    "  --fanout K         the tree's fan-out (default 4, the daemon's)\n"
    "  --loss P           probability that a call's message is lost (default 0.01)\n"
    "  --delay-us US      mean one-way delay (default 200)\n"
    "  --jitter J         delay distribution: exp (default) or uniform (0.5-1.5 x mean)\n"
    "  --warmup-s S       simulated warm-up before the first fault (default 2)\n"
    "  --after-s S        simulated time after each fault (default 2.5)\n"
    "  --scenarios LIST   of leaf,inner,hang,free (default all)\n"
    "  --victim I         node nI is the victim of every fault trial (to replay one)\n"
    "  --max-memory-gb G  skip a size whose estimated memory exceeds this (default 4)\n"
    "  --max-wall-s S     skip a size whose estimated wall time exceeds this (default 900)\n"
    "  --force            run every size whatever the estimates\n"
    "  --json             one JSON document on stdout instead of the table\n";

struct Args {
  std::vector<size_t> nodes{1000, 10000};
  size_t trials = 20;
  uint64_t seed = 1;
  size_t fan_out = 4;
  double loss = 0.01;
  double delay_us = 200;
  bool uniform = false;
  double warmup_s = 2.0;
  double after_s = 2.5;
  std::vector<Scenario> scenarios{Scenario::kLeafCrash, Scenario::kInnerCrash, Scenario::kProcessHang,
                                  Scenario::kFaultFree};
  double max_memory_gb = 4;
  double max_wall_s = 900;
  std::optional<uint32_t> victim;
  bool force = false;
  bool json = false;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "fault_tree_sim_bench: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

double parseNumber(const std::string& flag, const std::string& text, double min) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min) fail(flag + ": bad value '" + text + "'");
  return v;
}

Args parseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--nodes") {
      args.nodes.clear();
      for (const std::string& n : splitList(value())) args.nodes.push_back(static_cast<size_t>(parseNumber(a, n, 2)));
      if (args.nodes.empty()) fail("--nodes: empty list");
    } else if (a == "--trials") {
      args.trials = static_cast<size_t>(parseNumber(a, value(), 1));
    } else if (a == "--seed") {
      args.seed = static_cast<uint64_t>(parseNumber(a, value(), 0));
    } else if (a == "--fanout") {
      args.fan_out = static_cast<size_t>(parseNumber(a, value(), 1));
    } else if (a == "--loss") {
      args.loss = parseNumber(a, value(), 0);
      if (args.loss >= 1) fail("--loss must be below 1");
    } else if (a == "--delay-us") {
      args.delay_us = parseNumber(a, value(), 0.001);
    } else if (a == "--jitter") {
      std::string j = value();
      if (j != "exp" && j != "uniform") fail("--jitter: exp or uniform");
      args.uniform = j == "uniform";
    } else if (a == "--warmup-s") {
      args.warmup_s = parseNumber(a, value(), 0.1);
    } else if (a == "--after-s") {
      args.after_s = parseNumber(a, value(), 0.1);
    } else if (a == "--scenarios") {
      args.scenarios.clear();
      for (const std::string& s : splitList(value())) {
        if (s == "leaf") args.scenarios.push_back(Scenario::kLeafCrash);
        else if (s == "inner") args.scenarios.push_back(Scenario::kInnerCrash);
        else if (s == "hang") args.scenarios.push_back(Scenario::kProcessHang);
        else if (s == "free") args.scenarios.push_back(Scenario::kFaultFree);
        else fail("--scenarios: unknown '" + s + "' (leaf, inner, hang, free)");
      }
      if (args.scenarios.empty()) fail("--scenarios: empty list");
    } else if (a == "--victim") {
      args.victim = static_cast<uint32_t>(parseNumber(a, value(), 0));
    } else if (a == "--max-memory-gb") {
      args.max_memory_gb = parseNumber(a, value(), 0);
    } else if (a == "--max-wall-s") {
      args.max_wall_s = parseNumber(a, value(), 0);
    } else if (a == "--force") {
      args.force = true;
    } else if (a == "--json") {
      args.json = true;
    } else {
      fail("unknown argument '" + a + "'");
    }
  }
  return args;
}

// "n17": appended rather than "n" + ..., which GCC 12 warns about (-Wrestrict).
std::string nodeName(uint32_t index) {
  std::string name(1, 'n');
  name += std::to_string(index);
  return name;
}

std::string withCommas(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string fmt(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

// Words to lines of at most `width`, the later ones indented by two.
std::string wrap(const std::string& text, size_t width = 100) {
  std::stringstream in(text);
  std::string word, out, line;
  while (in >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = "  ";
    }
    line += (line.empty() || line == "  " ? "" : " ") + word;
  }
  return out + line;
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    }
    else out += c;
  }
  return out + "\"";
}

// Nearest rank; NaN without samples.
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

struct Row {
  Scenario scenario;
  std::vector<TrialResult> trials;
  double wall_s = 0;

  size_t count(bool (*pred)(const TrialResult&)) const {
    return static_cast<size_t>(std::count_if(trials.begin(), trials.end(), pred));
  }
  size_t reported() const { return count([](const TrialResult& t) { return t.first.has_value(); }); }
  size_t correct() const { return count([](const TrialResult& t) { return t.correct; }); }
  size_t offRoot() const { return count([](const TrialResult& t) { return t.off_root; }); }
  size_t falseReports() const {
    size_t n = 0;
    for (const TrialResult& t : trials) n += t.false_reports.size();
    return n;
  }
  size_t duplicates() const {
    size_t n = 0;
    for (const TrialResult& t : trials) n += t.duplicates;
    return n;
  }
  std::vector<double> localisation() const {
    std::vector<double> v;
    for (const TrialResult& t : trials)
      if (t.first) v.push_back(t.localisation_s);
    return v;
  }
  template <typename F>
  double mean(F f) const {
    double sum = 0;
    for (const TrialResult& t : trials) sum += static_cast<double>(f(t));
    return trials.empty() ? 0 : sum / static_cast<double>(trials.size());
  }
  template <typename F>
  double max(F f) const {
    double m = 0;
    for (const TrialResult& t : trials) m = std::max(m, static_cast<double>(f(t)));
    return m;
  }
};

struct Size {
  size_t nodes = 0;
  FaultTreeSim::Cost cost;
  double estimated_gb = 0, estimated_wall_s = 0;
  std::string skipped;  // why, when not simulated
  size_t height = 0;
  double build_wall_s = 0, warmup_wall_s = 0;
  size_t unwatched = 0;
  std::vector<PublishedFault> warmup_reports;
  std::vector<Row> rows;
};

bool isFault(Scenario s) { return s != Scenario::kFaultFree; }

// Over the fault scenarios: localisation p99 and the most root messages.
std::pair<double, double> goalFigures(const Size& size) {
  std::vector<double> loc;
  double root_max = 0;
  for (const Row& row : size.rows) {
    if (!isFault(row.scenario)) continue;
    std::vector<double> l = row.localisation();
    loc.insert(loc.end(), l.begin(), l.end());
    root_max = std::max(root_max, row.max([](const TrialResult& t) { return t.root_messages; }));
  }
  return {percentile(loc, 0.99), root_max};
}

std::string describeTrial(const Size& size, const TrialResult& t, size_t index) {
  std::string text = std::string(scenarioName(t.scenario)) + " trial " + std::to_string(index + 1);
  if (t.victim)
    text += ": victim n" + std::to_string(*t.victim) + " (depth " + std::to_string(t.victim_depth) + ", " +
            std::to_string(t.victim_children) + " children)";
  (void)size;
  if (!t.first) return text + ": no report about it within the run";
  return text + ": " + std::string(faultKindName(t.first->fault.kind)) + " published at n" +
         std::to_string(t.first->at) + (t.off_root ? " (expected n" + std::to_string(t.root) + ")" : "") + " after " +
         fmt("%.3f", t.localisation_s) + " s: " + t.first->fault.describe();
}

void runSize(const Args& args, Size& size) {
  const double period_s = 0.1;
  std::fprintf(stderr, "fault_tree_sim_bench: %zu nodes: measuring a FaultLocaliser\n", size.nodes);
  size.cost = FaultTreeSim::measureCost(size.nodes, args.fan_out);
  std::vector<std::string> names;
  for (size_t i = 0; i < size.nodes; ++i) names.push_back(nodeName(static_cast<uint32_t>(i)));
  size.height = FaultTree(std::move(names), args.fan_out).height();
  const double simulated_s =
      args.warmup_s + static_cast<double>(args.trials * args.scenarios.size()) * (args.after_s + period_s / 2);
  // The warm-up's end state is kept while a trial runs on a copy of it.
  size.estimated_gb = 2.0 * static_cast<double>(size.nodes) * size.cost.bytes_per_localiser / 1e9;
  size.estimated_wall_s = static_cast<double>(size.nodes) * (simulated_s / period_s) * size.cost.tick_s * 1.2;
  if (!args.force && (size.estimated_gb > args.max_memory_gb || size.estimated_wall_s > args.max_wall_s)) {
    size.skipped = "the run would need about " + fmt("%.1f", size.estimated_gb) + " GB (" +
                   fmt("%.0f", size.cost.bytes_per_localiser / 1024) + " KB per FaultLocaliser, twice: the warm-up's " +
                   "end state is kept) and " + fmt("%.0f", size.estimated_wall_s) + " s of wall time (" +
                   fmt("%.0f", static_cast<double>(size.nodes) / period_s) + " ticks per simulated second, " +
                   "FaultLocaliser::tick " + fmt("%.0f", size.cost.tick_s * 1e6) + " us each); limits " +
                   fmt("%.1f", args.max_memory_gb) + " GB and " + fmt("%.0f", args.max_wall_s) +
                   " s (--max-memory-gb, --max-wall-s; --force runs it anyway)";
    return;
  }
  if (args.victim) {
    bool inner = static_cast<size_t>(*args.victim) * args.fan_out + 1 < size.nodes;
    for (Scenario s : args.scenarios)
      if (*args.victim >= size.nodes || (s == Scenario::kLeafCrash && inner) || (s == Scenario::kInnerCrash && !inner))
        fail("--victim " + std::to_string(*args.victim) + " is not a possible victim of '" +
             std::string(scenarioName(s)) + "' at " + std::to_string(size.nodes) + " nodes");
  }
  SimConfig config;
  config.nodes = size.nodes;
  config.fan_out = args.fan_out;
  config.loss = args.loss;
  config.delay_mean_us = args.delay_us;
  config.uniform_jitter = args.uniform;
  config.warmup = std::chrono::milliseconds(static_cast<int64_t>(args.warmup_s * 1000));
  config.seed = args.seed * 1000003 + size.nodes;
  std::fprintf(stderr, "fault_tree_sim_bench: %zu nodes: building and warming up\n", size.nodes);
  FaultTreeSim sim(config);
  sim.warmUp();
  size.height = sim.tree().height();
  size.build_wall_s = sim.buildWallS();
  size.warmup_wall_s = sim.warmupWallS();
  size.unwatched = sim.unwatchedAfterWarmup();
  size.warmup_reports = sim.warmupReports();
  const auto after = std::chrono::milliseconds(static_cast<int64_t>(args.after_s * 1000));
  for (Scenario scenario : args.scenarios) {
    std::fprintf(stderr, "fault_tree_sim_bench: %zu nodes: %s, %zu trials\n", size.nodes,
                 std::string(scenarioName(scenario)).c_str(), args.trials);
    Row row{scenario, {}, 0};
    auto start = Clock::now();
    for (size_t trial = 0; trial < args.trials; ++trial) {
      uint64_t seed = args.seed * 1000003 + size.nodes * 101 + static_cast<uint64_t>(scenario) * 10007 + trial + 1;
      row.trials.push_back(sim.runTrial(scenario, seed, after, args.victim));
    }
    row.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    size.rows.push_back(std::move(row));
  }
}

void printTable(const Args& args, const std::vector<Size>& sizes, double total_wall_s) {
  std::printf("Fault tree simulation: FaultLocaliser per node, built-in rules, fan-out %zu, loss %.1f%%,\n",
              args.fan_out, args.loss * 100);
  std::printf("one-way delay %.0f us (%s), heartbeat 100 ms; deadlines: heartbeat 100 ms, message 500 ms,\n",
              args.delay_us, args.uniform ? "uniform 0.5-1.5 x" : "exponential");
  std::printf("probe 250 ms. Per size one %.1f s warm-up; each trial starts from its end state, injects the\n",
              args.warmup_s);
  std::printf("fault 0-100 ms later and runs %.1f s after it%s. Times are simulated seconds.\n\n", args.after_s,
              args.after_s < 3 ? " (reduced from ~3 s to keep the run short)" : "");
  std::printf("%7s  %-12s  %6s  %7s  %8s  %5s  %17s  %10s  %5s  %15s  %7s\n", "", "", "", "", "", "",
              "localisation (s)", "root msgs", "", "msgs/fault", "wall");
  std::printf("%7s  %-12s  %6s  %7s  %8s  %5s  %8s %8s  %5s %4s  %5s  %7s %7s  %7s\n", "nodes", "scenario", "trials",
              "correct", "off-root", "false", "p50", "p99", "mean", "max", "depth", "all", "victim", "(s)");
  for (const Size& size : sizes) {
    if (!size.skipped.empty()) {
      std::printf("%7zu  not simulated (see below)\n", size.nodes);
      continue;
    }
    for (const Row& row : size.rows) {
      std::vector<double> loc = row.localisation();
      bool fault = isFault(row.scenario);
      std::string correct = fault ? std::to_string(row.correct()) + "/" + std::to_string(row.trials.size()) : "-";
      std::string off_root = fault ? std::to_string(row.offRoot()) : "-";
      std::string p50 = loc.empty() ? "-" : fmt("%.3f", percentile(loc, 0.5));
      std::string p99 = loc.empty() ? "-" : fmt("%.3f", percentile(loc, 0.99));
      std::string victim =
          fault ? fmt("%.1f", row.mean([](const TrialResult& t) { return t.messages.about_victim; })) : "-";
      std::printf("%7zu  %-12s  %6zu  %7s  %8s  %5zu  %8s %8s  %5.1f %4.0f  %5zu  %7.1f %7s  %7.1f\n", size.nodes,
                  std::string(scenarioName(row.scenario)).c_str(), row.trials.size(), correct.c_str(), off_root.c_str(),
                  row.falseReports(), p50.c_str(), p99.c_str(),
                  row.mean([](const TrialResult& t) { return t.root_messages; }),
                  row.max([](const TrialResult& t) { return t.root_messages; }), size.height,
                  row.mean([](const TrialResult& t) { return t.messages.total(); }), victim.c_str(), row.wall_s);
    }
  }
  std::printf("\ncorrect: the first report about the victim names it and its rank with the right kind (node_down\n"
              "for a crash, process_hang for a hang). off-root: that report was published at a node other\n"
              "than the root (or, when the root crashed, the first live reporter). false: reports about other\n"
              "nodes. root msgs: forwarded symptoms and published faults delivered to the root from the\n"
              "fault until its report + 1 s. msgs/fault: forwards, publishes and probe attempts sent by any\n"
              "node from the fault to the end of the run (all; about the victim); heartbeats not counted.\n");

  for (const Size& size : sizes) {
    if (!size.skipped.empty()) continue;
    double simulated = args.warmup_s;
    size_t trials = 0;
    double wall = size.warmup_wall_s;
    for (const Row& row : size.rows) {
      trials += row.trials.size();
      simulated += static_cast<double>(row.trials.size()) * args.after_s;
      wall += row.wall_s;
    }
    std::printf("\n%zu nodes, tree depth %zu: built in %.2f s; the %.1f s warm-up took %.2f s wall (%s);\n"
                "  %zu trials took %.1f s wall (%.2f s each, %.2f simulated s per wall s); FaultLocaliser::tick\n"
                "  %.1f us, %.0f KB per FaultLocaliser\n",
                size.nodes, size.height, size.build_wall_s, args.warmup_s, size.warmup_wall_s,
                size.unwatched == 0 ? "after it every node was watched by its FLN"
                                    : (std::to_string(size.unwatched) + " nodes not yet watched by their FLN").c_str(),
                trials, wall - size.warmup_wall_s, (wall - size.warmup_wall_s) / std::max<double>(1, trials),
                simulated / std::max(wall, 1e-9), size.cost.tick_s * 1e6, size.cost.bytes_per_localiser / 1024);
    for (const PublishedFault& p : size.warmup_reports)
      std::printf("  published during the warm-up, at n%u: %s\n", p.at, p.fault.describe().c_str());
    // The trials that went wrong, a few per scenario. Trial k replays alone
    // with the same flags and --scenarios S --trials k: each trial's seed
    // depends on --seed, the size, the scenario and k only.
    for (const Row& row : size.rows) {
      size_t shown = 0;
      for (size_t index = 0; index < row.trials.size(); ++index) {
        const TrialResult& t = row.trials[index];
        bool odd = (isFault(row.scenario) && (!t.correct || t.off_root)) || !t.false_reports.empty();
        if (!odd || shown >= 3) continue;
        ++shown;
        std::printf("  %s\n", describeTrial(size, t, index).c_str());
        for (const PublishedFault& f : t.false_reports)
          std::printf("    false report at n%u after %.3f s: %s\n", f.at,
                      static_cast<double>(f.t_ns - t.fault_ns) / 1e9, f.fault.describe().c_str());
      }
    }
  }

  for (const Size& size : sizes)
    if (!size.skipped.empty())
      std::printf("\n%s\n", wrap(std::to_string(size.nodes) + " nodes, tree depth " + std::to_string(size.height) +
                                  ": not simulated: " + size.skipped).c_str());
  std::printf("\n");
  for (const Size& size : sizes) {
    if (!size.skipped.empty()) {
      std::printf("%s nodes: localisation p99 not simulated (goal < 2 s), root messages per fault max not simulated "
                  "(goal O(depth)= %zu)\n",
                  withCommas(size.nodes).c_str(), size.height);
      continue;
    }
    auto [p99, root_max] = goalFigures(size);
    std::printf("%s nodes: localisation p99 %s s (goal < 2 s), root messages per fault max %.0f (goal O(depth)= %zu)\n",
                withCommas(size.nodes).c_str(), std::isnan(p99) ? "-" : fmt("%.3f", p99).c_str(), root_max,
                size.height);
  }
  std::printf("total wall time %.1f s\n", total_wall_s);
}

void printJson(const Args& args, const std::vector<Size>& sizes, double total_wall_s) {
  auto num = [](double v) { return std::isnan(v) ? std::string("null") : fmt("%.6g", v); };
  std::string out = "{\"settings\":{";
  out += "\"fan_out\":" + std::to_string(args.fan_out) + ",\"loss\":" + num(args.loss) +
         ",\"delay_us\":" + num(args.delay_us) + ",\"jitter\":" + jsonString(args.uniform ? "uniform" : "exp") +
         ",\"warmup_s\":" + num(args.warmup_s) + ",\"after_s\":" + num(args.after_s) +
         ",\"trials\":" + std::to_string(args.trials) + ",\"seed\":" + std::to_string(args.seed) + "},\"sizes\":[";
  for (size_t si = 0; si < sizes.size(); ++si) {
    const Size& size = sizes[si];
    if (si) out += ",";
    out += "{\"nodes\":" + std::to_string(size.nodes) + ",\"simulated\":" + (size.skipped.empty() ? "true" : "false");
    out += ",\"skipped\":" + jsonString(size.skipped) + ",\"estimated_gb\":" + num(size.estimated_gb) +
           ",\"estimated_wall_s\":" + num(size.estimated_wall_s) + ",\"tick_us\":" + num(size.cost.tick_s * 1e6) +
           ",\"bytes_per_localiser\":" + num(size.cost.bytes_per_localiser) +
           ",\"depth\":" + std::to_string(size.height);
    if (size.skipped.empty()) {
      auto [p99, root_max] = goalFigures(size);
      out += ",\"build_wall_s\":" + num(size.build_wall_s) +
             ",\"warmup_wall_s\":" + num(size.warmup_wall_s) + ",\"unwatched_after_warmup\":" +
             std::to_string(size.unwatched) + ",\"warmup_reports\":" + std::to_string(size.warmup_reports.size()) +
             ",\"goal\":{\"localisation_p99_s\":" + num(p99) + ",\"root_messages_max\":" + num(root_max) +
             ",\"depth\":" + std::to_string(size.height) + "},\"scenarios\":[";
      for (size_t ri = 0; ri < size.rows.size(); ++ri) {
        const Row& row = size.rows[ri];
        std::vector<double> loc = row.localisation();
        if (ri) out += ",";
        out += "{\"scenario\":" + jsonString(std::string(scenarioName(row.scenario))) +
               ",\"trials\":" + std::to_string(row.trials.size()) + ",\"reported\":" + std::to_string(row.reported()) +
               ",\"correct\":" + std::to_string(row.correct()) + ",\"off_root\":" + std::to_string(row.offRoot()) +
               ",\"false_reports\":" + std::to_string(row.falseReports()) +
               ",\"duplicates\":" + std::to_string(row.duplicates()) +
               ",\"localisation_p50_s\":" + num(percentile(loc, 0.5)) +
               ",\"localisation_p99_s\":" + num(percentile(loc, 0.99)) +
               ",\"root_messages_mean\":" + num(row.mean([](const TrialResult& t) { return t.root_messages; })) +
               ",\"root_messages_max\":" + num(row.max([](const TrialResult& t) { return t.root_messages; })) +
               ",\"messages_mean\":" + num(row.mean([](const TrialResult& t) { return t.messages.total(); })) +
               ",\"messages_about_victim_mean\":" +
               num(row.mean([](const TrialResult& t) { return t.messages.about_victim; })) +
               ",\"heartbeats_mean\":" + num(row.mean([](const TrialResult& t) { return t.messages.heartbeats; })) +
               ",\"wall_s\":" + num(row.wall_s) + ",\"trial_results\":[";
        for (size_t ti = 0; ti < row.trials.size(); ++ti) {
          const TrialResult& t = row.trials[ti];
          if (ti) out += ",";
          out += "{\"seed\":" + std::to_string(t.seed) +
                 ",\"victim\":" + (t.victim ? jsonString(nodeName(*t.victim)) : std::string("null")) +
                 ",\"victim_depth\":" + std::to_string(t.victim_depth) +
                 ",\"victim_children\":" + std::to_string(t.victim_children) +
                 ",\"reported_kind\":" +
                 (t.first ? jsonString(std::string(faultKindName(t.first->fault.kind))) : std::string("null")) +
                 ",\"reported_at\":" + (t.first ? jsonString(nodeName(t.first->at)) : std::string("null")) +
                 ",\"localisation_s\":" + (t.first ? num(t.localisation_s) : std::string("null")) +
                 ",\"correct\":" + (t.correct ? "true" : "false") + ",\"off_root\":" + (t.off_root ? "true" : "false") +
                 ",\"false_reports\":" + std::to_string(t.false_reports.size()) +
                 ",\"root_messages\":" + std::to_string(t.root_messages) +
                 ",\"forwards\":" + std::to_string(t.messages.forwards) +
                 ",\"publishes\":" + std::to_string(t.messages.publishes) +
                 ",\"probes\":" + std::to_string(t.messages.probes) +
                 ",\"about_victim\":" + std::to_string(t.messages.about_victim) +
                 ",\"analyses\":" + std::to_string(t.analyses) + ",\"wall_s\":" + num(t.wall_s) + "}";
        }
        out += "]}";
      }
      out += "]";
    }
    out += "}";
  }
  out += "],\"total_wall_s\":" + num(total_wall_s) + "}\n";
  std::fputs(out.c_str(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parseArgs(argc, argv);
  auto start = Clock::now();
  std::vector<Size> sizes;
  for (size_t n : args.nodes) {
    Size size;
    size.nodes = n;
    runSize(args, size);
    sizes.push_back(std::move(size));
  }
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (args.json) printJson(args, sizes, wall);
  else printTable(args, sizes, wall);
  return 0;
}
