// The energy evaluation: every NAS workload model under every policy on
// Shafik et al.'s simulated Xeon node, at one budget, in one run. Writes
// DIR/results.csv (the columns scripts rely on), DIR/details.csv (more
// columns), DIR/results.txt (the table printed here) and PNG plots made
// with gnuplot.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "energy/policy_registry.h"
#include "nas_workload_catalog.h"
#include "node_simulator.h"
#include "pack_and_cap_policy.h"
#include "pack_and_cap_table.h"

namespace {

using namespace nk;
using namespace nk::sim;

const std::vector<std::string> kPolicies = {"performance", "powersave", "ondemand",
                                            "pack-and-cap", "thermal-aware", "efficiency"};

constexpr const char* kUsage =
    "usage: bench_energy --out DIR [--budget WATTS] [--scope cores|node] [--benchmarks LIST]\n"
    "                    [--policies LIST] [--jobs N] [--step SECONDS] [--no-plots]\n"
    "\n"
    "Runs NAS workload models under each policy on the simulated Xeon E5-2630 node\n"
    "and writes DIR/results.csv, DIR/details.csv, DIR/results.txt and DIR/*.png.\n"
    "  --budget WATTS    the app's power budget (default 30, as in Shafik et al.)\n"
    "  --scope S         what the budget covers: 'cores' (default; the paper's sum of\n"
    "                    thread powers: the app's cores without uncore) or 'node'\n"
    "                    (all package power, as nodekeeperd charges it)\n"
    "  --benchmarks LIST comma-separated, e.g. cg.B,ep.C (default: all 19)\n"
    "  --policies LIST   comma-separated subset of performance, powersave, ondemand,\n"
    "                    pack-and-cap, thermal-aware, efficiency (default: all)\n"
    "  --jobs N          simulations run in parallel (default: the host's CPUs)\n"
    "  --step SECONDS    simulation step (default 0.005)\n"
    "  --trace B:P       also write DIR/trace-B-P.csv: every dT_DCT interval of\n"
    "                    benchmark B under policy P (repeatable)\n"
    "  --no-plots        skip gnuplot\n";

struct Args {
  std::filesystem::path out;
  double budget_w = 30.0;
  BudgetScope scope = BudgetScope::kAppCores;
  std::vector<const WorkloadModel*> benchmarks;
  std::vector<std::string> policies = kPolicies;
  unsigned jobs = 0;
  double step_s = 0.005;
  bool plots = true;
  std::vector<std::pair<std::string, std::string>> traces;
};

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "bench_energy: %s\n", message.c_str());
  std::exit(2);
}

double positiveNumber(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    fail(flag + " wants a positive number, not '" + text + "'");
  return v;
}

Args parse(int argc, char** argv) {
  Args args;
  bool have_out = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (flag == "--no-plots") {
      args.plots = false;
      continue;
    }
    if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0) fail(flag + " needs a value\n" + kUsage);
    std::string value = argv[++i];
    if (flag == "--out") {
      args.out = value;
      have_out = true;
    } else if (flag == "--budget") {
      args.budget_w = positiveNumber(flag, value);
    } else if (flag == "--scope") {
      if (value == "cores") args.scope = BudgetScope::kAppCores;
      else if (value == "node") args.scope = BudgetScope::kNode;
      else fail("--scope is 'cores' or 'node', not '" + value + "'");
    } else if (flag == "--benchmarks") {
      for (const std::string& name : splitList(value)) {
        const WorkloadModel* m = NasWorkloadCatalog::find(name);
        if (!m) {
          std::string known;
          for (const WorkloadModel& w : NasWorkloadCatalog::all()) known += (known.empty() ? "" : ", ") + w.name;
          fail("unknown benchmark '" + name + "'; known: " + known);
        }
        args.benchmarks.push_back(m);
      }
    } else if (flag == "--policies") {
      args.policies.clear();
      for (const std::string& name : splitList(value)) {
        bool known = false;
        for (const std::string& p : kPolicies) known = known || p == name;
        if (!known) fail("unknown policy '" + name + "'; known: performance, powersave, ondemand, pack-and-cap, thermal-aware, efficiency");
        args.policies.push_back(name);
      }
      if (args.policies.empty()) fail("--policies is empty");
    } else if (flag == "--jobs") {
      double v = positiveNumber(flag, value);
      if (v != std::floor(v) || v > 64) fail("--jobs wants a whole number from 1 to 64, not '" + value + "'");
      args.jobs = static_cast<unsigned>(v);
    } else if (flag == "--trace") {
      size_t colon = value.find(':');
      if (colon == std::string::npos || !NasWorkloadCatalog::find(value.substr(0, colon)))
        fail("--trace wants BENCHMARK:POLICY, e.g. sp.C:efficiency, not '" + value + "'");
      args.traces.emplace_back(value.substr(0, colon), value.substr(colon + 1));
    } else if (flag == "--step") {
      args.step_s = positiveNumber(flag, value);
      if (args.step_s > 0.05) fail("--step must not exceed dT_DVFS (0.05 s)");
    } else {
      fail("unknown option '" + flag + "'\n" + kUsage);
    }
  }
  if (!have_out) fail(std::string("--out DIR is required\n") + kUsage);
  if (args.benchmarks.empty())
    for (const WorkloadModel& w : NasWorkloadCatalog::all()) args.benchmarks.push_back(&w);
  if (args.jobs == 0) args.jobs = std::max(1u, std::thread::hardware_concurrency());
  return args;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

struct Row {
  std::string benchmark, policy;
  SimulationResult r;
  // pack-and-cap rows: the work rate of the fastest setting its table finds
  // within the budget (work seconds per second; 0 = none fits).
  double best_rate_in_budget = 0.0;
};

std::vector<Row> runBenchmark(const Args& args, const WorkloadModel& w) {
  PolicyConfig config;
  NodeProfile profile = NodeProfile::xeonE5_2630();
  std::vector<Row> rows;
  for (const std::string& name : args.policies) {
    std::unique_ptr<EnergyPolicy> policy;
    double best_rate = 0.0;
    if (name == "pack-and-cap") {
      PackAndCapTable table = PackAndCapTable::train(profile, config, args.scope, w);
      for (const PackAndCapTable::Entry& e : table.entries())
        if (e.power_w <= args.budget_w) best_rate = std::max(best_rate, e.work_rate);
      policy = std::make_unique<PackAndCapPolicy>(std::move(table));
    } else {
      auto made = makePolicy(name, config);
      if (!made) fail(made.error().message);
      policy = std::move(*made);
    }
    NodeSimulator::Options options;
    options.step_s = args.step_s;
    options.budget_w = args.budget_w;
    options.budget_scope = args.scope;
    options.max_time_s = 20 * NasWorkloadCatalog::closedFormSeconds(w, 12, 1.0) + 60;
    std::ofstream trace;
    for (const auto& [bench, traced] : args.traces)
      if (bench == w.name && traced == name) {
        trace.open(args.out / ("trace-" + bench + "-" + traced + ".csv"));
        trace << "time_s,power_w,node_power_w,threads,mean_mhz,max_temp_c\n";
        options.on_interval = [&trace](const IntervalSample& s) {
          trace << fmt("%.2f", s.time_s) << ',' << fmt("%.2f", s.power_w) << ',' << fmt("%.2f", s.node_power_w) << ','
                << s.threads << ',' << fmt("%.0f", s.mean_mhz) << ',' << fmt("%.2f", s.max_temp_c) << '\n';
        };
      }
    SimulationResult r = NodeSimulator(profile, config, options).run(w, *policy);
    rows.push_back({w.name, name, r, best_rate});
  }
  return rows;
}

void writeCsv(const std::filesystem::path& file, const std::vector<Row>& rows, const Args& args, bool details) {
  std::ofstream out(file);
  out << "benchmark,policy,time_s,energy_j,avg_temp_c,peak_temp_c,temp_std_c,mttf_years,over_budget_frac";
  if (details) out << ",budget_w,budget_scope,app_energy_j,mean_threads,mean_active_mhz,budget_intervals,finished";
  out << "\n";
  for (const Row& row : rows) {
    const SimulationResult& r = row.r;
    out << row.benchmark << ',' << row.policy << ',' << fmt("%.3f", r.time_s) << ',' << fmt("%.1f", r.energy_j) << ','
        << fmt("%.2f", r.avg_temp_c) << ',' << fmt("%.2f", r.peak_temp_c) << ',' << fmt("%.3f", r.temp_std_c) << ','
        << fmt("%.2f", r.mttf_years) << ',' << fmt("%.4f", r.over_budget_frac);
    if (details)
      out << ',' << fmt("%.1f", args.budget_w) << ',' << (args.scope == BudgetScope::kNode ? "node" : "cores") << ','
          << fmt("%.1f", r.app_energy_j) << ',' << fmt("%.2f", r.mean_threads) << ','
          << fmt("%.0f", r.mean_active_mhz) << ',' << r.dct_intervals << ',' << (r.finished ? "yes" : "no");
    out << "\n";
  }
  if (!out) fail("cannot write " + file.string());
}

const Row* find(const std::vector<Row>& rows, const std::string& bench, const std::string& policy) {
  for (const Row& r : rows)
    if (r.benchmark == bench && r.policy == policy) return &r;
  return nullptr;
}

// The table per benchmark and policy, then per policy its averages against
// ondemand and thermal-aware and the goals.
std::string table(const std::vector<Row>& rows, const Args& args) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "budget %.1f W (%s)\n", args.budget_w,
                args.scope == BudgetScope::kNode ? "node: all package power" : "cores: the app's cores, no uncore");
  o << line;
  std::snprintf(line, sizeof line, "%-6s %-14s %9s %10s %7s %7s %7s %7s %6s %5s %6s\n", "bench", "policy", "time s",
                "energy J", "avg C", "peak C", "std C", "MTTF y", "over", "D", "MHz");
  o << line;
  std::string last;
  for (const Row& row : rows) {
    if (!last.empty() && row.benchmark != last) o << "\n";
    last = row.benchmark;
    const SimulationResult& r = row.r;
    std::snprintf(line, sizeof line, "%-6s %-14s %9.1f %10.0f %7.1f %7.1f %7.2f %7.1f %5.1f%% %5.1f %6.0f%s\n",
                  row.benchmark.c_str(), row.policy.c_str(), r.time_s, r.energy_j, r.avg_temp_c, r.peak_temp_c,
                  r.temp_std_c, r.mttf_years, 100 * r.over_budget_frac, r.mean_threads, r.mean_active_mhz,
                  r.finished ? "" : "  (unfinished)");
    o << line;
  }
  o << "\nPer policy, over the benchmarks (ratios to ondemand and to thermal-aware on the same benchmark):\n";
  std::snprintf(line, sizeof line, "%-14s %12s %12s %12s %12s %10s %10s\n", "policy", "E/ondemand", "max T/ondem",
                "mean T/ondem", "E/thermal", "in budget", "std<ondem");
  o << line;
  for (const std::string& policy : args.policies) {
    double e_od = 0, t_od_max = 0, t_od = 0, e_ta = 0;
    int n_od = 0, n_ta = 0, cooler = 0, n_std = 0;
    uint64_t intervals = 0, over = 0;
    for (const WorkloadModel* w : args.benchmarks) {
      const Row* r = find(rows, w->name, policy);
      if (!r) continue;
      intervals += r->r.dct_intervals;
      over += static_cast<uint64_t>(std::llround(r->r.over_budget_frac * r->r.dct_intervals));
      if (const Row* od = find(rows, w->name, "ondemand")) {
        e_od += r->r.energy_j / od->r.energy_j;
        t_od += r->r.time_s / od->r.time_s;
        t_od_max = std::max(t_od_max, r->r.time_s / od->r.time_s);
        ++n_od;
        cooler += r->r.temp_std_c < od->r.temp_std_c;
        ++n_std;
      }
      if (const Row* ta = find(rows, w->name, "thermal-aware")) {
        e_ta += r->r.energy_j / ta->r.energy_j;
        ++n_ta;
      }
    }
    auto ratio = [](double sum, int n) { return n ? fmt("%.3f", sum / n) : std::string("-"); };
    std::snprintf(line, sizeof line, "%-14s %12s %12s %12s %12s %9.1f%% %6d/%-3d\n", policy.c_str(),
                  ratio(e_od, n_od).c_str(), n_od ? fmt("%.3f", t_od_max).c_str() : "-", ratio(t_od, n_od).c_str(),
                  ratio(e_ta, n_ta).c_str(), intervals ? 100.0 * (intervals - over) / intervals : 100.0, cooler, n_std);
    o << line;
  }
  // How much slower than ondemand the budget forces any policy to be: the
  // fastest fixed setting within it, from the Pack & Cap table (a bound for
  // settings held for a whole run; a policy that moves between them can be
  // a little faster, as the phases differ).
  double floor_sum = 0, floor_min = 1e300;
  int floors = 0;
  for (const WorkloadModel* w : args.benchmarks) {
    const Row* pc = find(rows, w->name, "pack-and-cap");
    const Row* od = find(rows, w->name, "ondemand");
    if (!pc || !od || !(pc->best_rate_in_budget > 0) || !(od->r.time_s > 0)) continue;
    double work = 0;
    for (const WorkloadPhase& ph : w->prologue) work += ph.work_core_s;
    for (const WorkloadPhase& ph : w->phases) work += ph.work_core_s * w->repeat;
    double ratio = work / pc->best_rate_in_budget / od->r.time_s;
    floor_sum += ratio;
    floor_min = std::min(floor_min, ratio);
    ++floors;
  }
  if (floors) {
    std::snprintf(line, sizeof line,
                  "\nFastest fixed setting within the budget (Pack & Cap's table), time relative to ondemand: "
                  "mean %.2f, best %.2f\n", floor_sum / floors, floor_min);
    o << line;
  }
  return o.str();
}

// One data file per metric (rows: benchmarks, columns: policies) and a
// gnuplot script drawing each as clustered bars, like Shafik et al.'s Fig. 2/3.
void plot(const std::vector<Row>& rows, const Args& args) {
  struct Metric {
    const char* file;
    const char* title;
    double (*get)(const SimulationResult&);
    bool relative = false;  // divided by ondemand's on the same benchmark
  };
  const Metric metrics[] = {
      {"time", "Execution time (s)", [](const SimulationResult& r) { return r.time_s; }},
      {"energy", "Energy (J)", [](const SimulationResult& r) { return r.energy_j; }},
      {"energy_vs_ondemand", "Energy relative to ondemand", [](const SimulationResult& r) { return r.energy_j; }, true},
      {"time_vs_ondemand", "Execution time relative to ondemand", [](const SimulationResult& r) { return r.time_s; },
       true},
      {"mttf", "Estimated MTTF (years, RAMP)", [](const SimulationResult& r) { return r.mttf_years; }},
      {"temperature", "Average core temperature (C)", [](const SimulationResult& r) { return r.avg_temp_c; }},
      {"temp_std", "Temperature std-dev across cores (C)", [](const SimulationResult& r) { return r.temp_std_c; }},
  };
  std::ofstream gp(args.out / "plots.gp");
  gp << "# gnuplot " << (args.out / "plots.gp").string() << " (run from " << args.out.string() << ")\n"
     << "set terminal pngcairo size 1400,520 font ',10'\n"
     << "set style data histograms\nset style histogram cluster gap 1\nset style fill solid 0.85 border -1\n"
     << "set boxwidth 0.9\nset xtics rotate by -45 nomirror\nset grid ytics\nset key outside top center horizontal\n"
     << "set yrange [0:*]\n";
  char budget[64];
  std::snprintf(budget, sizeof budget, "%.0f W budget", args.budget_w);
  for (const Metric& m : metrics) {
    if (m.relative && std::find(args.policies.begin(), args.policies.end(), "ondemand") == args.policies.end()) continue;
    std::ofstream dat(args.out / (std::string(m.file) + ".dat"));
    dat << "benchmark";
    for (const std::string& p : args.policies) dat << ' ' << p;
    dat << "\n";
    for (const WorkloadModel* w : args.benchmarks) {
      dat << w->name;
      for (const std::string& p : args.policies) {
        const Row* r = find(rows, w->name, p);
        const Row* base = m.relative ? find(rows, w->name, "ondemand") : nullptr;
        double v = r ? m.get(r->r) : NAN;
        if (m.relative) v = base && m.get(base->r) > 0 ? v / m.get(base->r) : NAN;
        dat << ' ' << (std::isfinite(v) ? fmt("%.4f", v) : std::string("NaN"));
      }
      dat << "\n";
    }
    gp << "set output '" << m.file << ".png'\nset title '" << m.title << ", " << budget << "'\n"
       << "plot for [i=2:" << args.policies.size() + 1 << "] '" << m.file
       << ".dat' using i:xtic(1) title columnheader(i)\n";
  }
  gp.close();
  std::string command = "cd '" + args.out.string() + "' && gnuplot plots.gp 2> gnuplot.log";
  if (std::system(command.c_str()) != 0)
    std::fprintf(stderr, "bench_energy: gnuplot failed (see %s); the CSV and table are written\n",
                 (args.out / "gnuplot.log").string().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) fail("cannot create " + args.out.string() + ": " + ec.message());

  auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<Row>> per_benchmark(args.benchmarks.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex progress;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < args.benchmarks.size();) {
      auto t0 = std::chrono::steady_clock::now();
      per_benchmark[i] = runBenchmark(args, *args.benchmarks[i]);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard lock(progress);
      std::fprintf(stderr, "[%2zu/%zu] %-5s %zu policies in %.1f s\n", ++done, args.benchmarks.size(),
                   args.benchmarks[i]->name.c_str(), per_benchmark[i].size(), s);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned j = 0; j < std::min<size_t>(args.jobs, args.benchmarks.size()); ++j) pool.emplace_back(worker);
  for (std::thread& t : pool) t.join();

  std::vector<Row> rows;
  for (auto& b : per_benchmark) rows.insert(rows.end(), b.begin(), b.end());
  writeCsv(args.out / "results.csv", rows, args, false);
  writeCsv(args.out / "details.csv", rows, args, true);
  std::string text = table(rows, args);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char tail[128];
  std::snprintf(tail, sizeof tail, "\n%zu runs in %.1f s wall time (%u jobs)\n", rows.size(), elapsed, args.jobs);
  text += tail;
  std::ofstream(args.out / "results.txt") << text;
  std::fputs(text.c_str(), stdout);
  if (args.plots) plot(rows, args);
  std::fprintf(stderr, "wrote %s/{results.csv,details.csv,results.txt%s}\n", args.out.string().c_str(),
               args.plots ? ",*.png" : "");
  return 0;
}
