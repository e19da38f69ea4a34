// The recorded task graph of real OpenMP programs against an oracle: each
// program (tests/integration/oracle/, shaped like BOTS and KaStORS) runs
// under libnodekeeper with a small OMPT tool of its own in front
// (ompt_shim.cc), which logs what libomp reported: every task created
// (parent, id) and every raw dependence list. The test works out the
// expected edges from that log by itself, from OpenMP's rules as the
// specification states them (a task follows every earlier sibling that
// named an address with a conflicting kind), keeping the nearest
// predecessors by reachability; libnodekeeper's DependenceTracker keeps
// groups instead. The graph rebuilt from the daemon's recording must match
// exactly: every task, every pair, every address and kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "task_daemon_fixture.h"
#include "taskgraph/task_graph.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"

namespace nk::test {
namespace {

using Dependences = std::vector<std::pair<uint64_t, int>>;  // address, DependenceKind; sorted
using Pairs = std::map<std::pair<uint64_t, uint64_t>, Dependences>;

// tasks.proto's DependenceKind.
enum Kind { kIn = 1, kOut = 2, kInout = 3, kMutexinoutset = 4, kInoutset = 5 };

// From ompt_dependence_type_t; 0 for kinds that are no task dependence.
int kindOf(int ompt_type) {
  switch (ompt_type) {
    case 1: return kIn;
    case 2: return kOut;
    case 3: return kInout;
    case 4: return kMutexinoutset;
    case 7: return kInoutset;
    default: return 0;
  }
}

bool writer(int kind) { return kind == kOut || kind == kInout; }

// OpenMP 5.1, 2.19.11: two uses of an address by sibling tasks order them
// unless both are in, both mutexinoutset or both inoutset.
bool conflict(int a, int b) { return !(a == b && (a == kIn || a == kMutexinoutset || a == kInoutset)); }

struct Access {
  uint64_t task;
  int kind;
};

struct Expected {
  std::set<uint64_t> tasks;
  Pairs pairs;
  uint64_t dependences = 0;
  std::string error;
};

// What a debugger would show for a task: "function (oracle_programs.cc:N)",
// where line N of the program's source holds the task construct (its pragma,
// or the statement the pragma precedes) and `function` is defined above
// it. Empty when the name is right, else what is wrong with it.
std::string nameProblem(const std::string& name, const std::vector<std::string>& source) {
  static const std::regex shape(R"(^((?:\(anonymous namespace\)::|[A-Za-z_][A-Za-z_0-9<>]*::)*[A-Za-z_][A-Za-z_0-9<>]*) \(oracle_programs\.cc:(\d+)\)$)");
  std::smatch m;
  if (!std::regex_match(name, m, shape)) return "'" + name + "' is not 'function (oracle_programs.cc:LINE)'";
  const std::string function = m[1];
  const size_t line = std::stoul(m[2]);
  if (line < 1 || line > source.size()) return "'" + name + "': no such line";
  auto holdsTask = [&](size_t at) { return at >= 1 && source[at - 1].find("#pragma omp task") != std::string::npos; };
  if (!holdsTask(line) && !holdsTask(line - 1)) return "'" + name + "': line " + m[2].str() + " holds no task construct";
  const std::string bare = function.substr(function.rfind(':') == std::string::npos ? 0 : function.rfind(':') + 1);
  const std::regex definition("\\b" + bare + "\\s*\\(");
  for (size_t at = line; at >= 1; --at)
    if (std::regex_search(source[at - 1], definition) && source[at - 1].find(';') == std::string::npos) return {};
  return "'" + name + "': no function " + bare + " defined above line " + m[2].str();
}

// The oracle: reads the shim's log and applies the rules.
Expected expectFromLog(const std::filesystem::path& log) {
  Expected out;
  std::ifstream in(log);
  if (!in) {
    out.error = "no log at " + log.string();
    return out;
  }
  std::map<uint64_t, uint64_t> parent_of;
  // Per parent and address, the accesses since the last writer (the ones
  // before it are ordered before it, and it before any later access).
  std::map<uint64_t, std::map<uint64_t, std::vector<Access>>> history;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    char type = 0;
    words >> type;
    if (type == 'C') {
      uint64_t parent = 0, task = 0;
      words >> parent >> task;
      if (task == 0 || !out.tasks.insert(task).second) {
        out.error = "bad or repeated task in: " + line;
        return out;
      }
      parent_of[task] = parent;
      continue;
    }
    if (type != 'D') {
      out.error = "bad line: " + line;
      return out;
    }
    uint64_t task = 0;
    int count = 0;
    words >> task >> count;
    if (!parent_of.count(task)) {
      out.error = "dependences of a task never created: " + line;
      return out;
    }
    // One use per address, as libomp merges a list: the kind if all agree,
    // else a write (named by its out/inout entry, else inout).
    std::vector<std::pair<uint64_t, std::vector<int>>> uses;
    for (int i = 0; i < count; ++i) {
      uint64_t address = 0;
      int ompt_type = 0;
      words >> address >> ompt_type;
      const int kind = kindOf(ompt_type);
      if (kind == 0) continue;
      auto it = std::find_if(uses.begin(), uses.end(), [&](const auto& u) { return u.first == address; });
      if (it == uses.end()) {
        uses.push_back({address, {kind}});
      } else {
        it->second.push_back(kind);
      }
    }
    if (!words) {
      out.error = "short line: " + line;
      return out;
    }
    auto& addresses = history[parent_of[task]];
    for (const auto& [address, kinds] : uses) {
      int kind = kinds.front();
      if (std::any_of(kinds.begin(), kinds.end(), [&](int k) { return k != kinds.front(); })) {
        kind = kInout;
        for (int k : kinds)
          if (writer(k)) kind = k;
      }
      std::vector<Access>& earlier = addresses[address];
      // Backwards: an earlier access is ordered before this task if it
      // conflicts with it, or with a later access that is. The nearest
      // predecessors conflict directly and precede no other that is.
      std::array<bool, 6> ordered_later{};  // by kind
      for (size_t i = earlier.size(); i-- > 0;) {
        const Access& a = earlier[i];
        bool before_another = false;
        for (int k = 1; k <= 5; ++k) before_another = before_another || (ordered_later[k] && conflict(a.kind, k));
        const bool direct = conflict(a.kind, kind);
        if (direct && !before_another) {
          out.pairs[{a.task, task}].emplace_back(address, kind);
          ++out.dependences;
        }
        if (direct || before_another) ordered_later[a.kind] = true;
      }
      if (writer(kind)) earlier.clear();
      earlier.push_back({task, kind});
    }
  }
  for (auto& [pair, deps] : out.pairs) std::sort(deps.begin(), deps.end());
  return out;
}

Pairs pairsOf(const TaskGraph& graph, std::string* error) {
  Pairs pairs;
  std::vector<TaskGraph::Dependence> deps;
  for (const auto& e : graph.edges()) {
    graph.dependencesOf(e, deps);
    Dependences& d = pairs[{e.from, e.to}];
    if (!d.empty()) *error += "pair " + std::to_string(e.from) + " -> " + std::to_string(e.to) + " twice\n";
    for (const auto& x : deps) d.emplace_back(x.address, x.kind);
    std::sort(d.begin(), d.end());
  }
  return pairs;
}

std::string describe(const std::pair<uint64_t, uint64_t>& pair, const Dependences* deps) {
  std::ostringstream s;
  s << pair.first << " -> " << pair.second << ":";
  if (!deps) return s.str() + " (none)";
  for (const auto& [address, kind] : *deps) s << " 0x" << std::hex << address << std::dec << "/" << kind;
  return s.str();
}

// The first few differences, for a failure message that fits.
std::string differences(const Pairs& expected, const Pairs& recorded) {
  std::string text;
  size_t shown = 0, missing = 0, extra = 0, different = 0;
  auto show = [&](const std::string& what) {
    if (shown++ < 8) text += what + "\n";
  };
  for (const auto& [pair, deps] : expected) {
    auto it = recorded.find(pair);
    if (it == recorded.end()) {
      ++missing;
      show("missing  " + describe(pair, &deps));
    } else if (it->second != deps) {
      ++different;
      show("expected " + describe(pair, &deps) + "\n recorded " + describe(pair, &it->second));
    }
  }
  for (const auto& [pair, deps] : recorded)
    if (!expected.count(pair)) {
      ++extra;
      show("extra    " + describe(pair, &deps));
    }
  return std::to_string(missing) + " missing, " + std::to_string(extra) + " extra, " + std::to_string(different) +
         " with other addresses\n" + text;
}

class TaskOracleTest : public TaskDaemonFixture {
 protected:
  TaskOracleTest() : TaskDaemonFixture("oracle") {}

  struct Checked {
    uint64_t tasks = 0, pairs = 0, dependences = 0;
  };

  // Runs the program under libnodekeeper (lossless) and the shim, then holds
  // the recording against the oracle.
  Checked check(const std::string& program, const std::string& size) {
    Checked checked;
    const auto log = dir_ / (program + ".log");
    ProcessResult run = nk::test::runProgram(
        {"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(), "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"),
         "NODEKEEPER_TASKS=lossless", "OMP_NUM_THREADS=4", "NK_ORACLE_LOG=" + log.string(),
         envOr("NK_ORACLE_PROGRAMS"), program, size},
        std::nullopt, std::chrono::seconds(240));
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(run.out, m, std::regex(program + " ok tasks=(\\d+)"))) << run.out << run.err;
    if (m.empty()) return checked;
    const uint64_t program_tasks = std::stoull(m[1]);
    // The daemon has the whole stream once the session has ended.
    EXPECT_TRUE(waitFor(
        [&] {
          auto list = sessions();
          return list.size() == 1 && !list[0].live();
        },
        std::chrono::seconds(60)));

    Expected expected = expectFromLog(log);
    EXPECT_EQ(expected.error, "");
    EXPECT_EQ(expected.tasks.size(), program_tasks) << "the shim's log misses tasks";
    TaskGraph graph = graphFromRecording();
    EXPECT_EQ(graph.rejected(), 0u);

    std::set<uint64_t> recorded_tasks;
    for (const auto& t : graph.tasks()) {
      recorded_tasks.insert(t.id);
      EXPECT_TRUE(t.created) << "task " << t.id << " has edges but was never created";
      EXPECT_EQ(t.state, TaskState::kFinished) << t.id;
    }
    EXPECT_EQ(recorded_tasks.size(), expected.tasks.size());
    // Every task named by its function and the line of its construct.
    std::vector<std::string> source;
    {
      std::ifstream in(envOr("NK_ORACLE_SOURCE"));
      for (std::string line; std::getline(in, line);) source.push_back(line);
    }
    EXPECT_FALSE(source.empty()) << "NK_ORACLE_SOURCE";
    std::map<std::string, uint64_t> problems;
    for (const auto& t : graph.tasks())
      if (std::string problem = nameProblem(graph.functions()[t.function], source); !problem.empty())
        ++problems[problem];
    for (const auto& [problem, count] : problems) ADD_FAILURE() << count << " tasks: " << problem;
    EXPECT_TRUE(recorded_tasks == expected.tasks) << "the recording and the log have different tasks";

    std::string error;
    Pairs recorded = pairsOf(graph, &error);
    EXPECT_EQ(error, "");
    EXPECT_TRUE(recorded == expected.pairs) << differences(expected.pairs, recorded);
    EXPECT_EQ(graph.edges().size(), expected.pairs.size());
    EXPECT_EQ(graph.dependences(), expected.dependences);
    auto list = sessions();
    if (list.size() == 1) {
      EXPECT_EQ(list[0].tasks(), expected.tasks.size());
      EXPECT_EQ(list[0].edges(), expected.pairs.size());  // the daemon's count is of pairs too
    }
    checked = {graph.tasks().size(), graph.edges().size(), graph.dependences()};
    std::printf("%s %s: %llu tasks, %llu pairs, %llu dependences\n", program.c_str(), size.c_str(),
                static_cast<unsigned long long>(checked.tasks), static_cast<unsigned long long>(checked.pairs),
                static_cast<unsigned long long>(checked.dependences));
    return checked;
  }
};

// BOTS fib: ~92 k tasks, no depend clauses: every task, no edge.
TEST_F(TaskOracleTest, RecursiveFib) {
  Checked c = check("fib", "23");
  EXPECT_GT(c.tasks, 90000u);
  EXPECT_EQ(c.pairs, 0u);
}

// A tree of villages: nested parents, each with its own dependences.
TEST_F(TaskOracleTest, HealthLikeTree) {
  Checked c = check("health", "5");
  EXPECT_GT(c.tasks, 20000u);
  EXPECT_GT(c.pairs, 10000u);
}

TEST_F(TaskOracleTest, SparseLuWithDepend) {
  Checked c = check("sparselu", "30");
  EXPECT_GT(c.tasks, 5000u);
  EXPECT_GT(c.pairs, 5000u);
}

// KaStORS-like block Jacobi: a pair often shares two blocks (one read, one
// written), so dependences outnumber pairs.
TEST_F(TaskOracleTest, BlockJacobiWithArraySections) {
  Checked c = check("jacobi", "16");
  EXPECT_GT(c.tasks, 10000u);
  EXPECT_GT(c.dependences, c.pairs);
  // The CLI's DOT has one arrow per pair, a two-address label where a pair
  // shares two blocks.
  auto list = sessions();
  ASSERT_EQ(list.size(), 1u);
  const auto dot = dir_ / "jacobi.dot";
  ProcessResult r = nk::test::runProgram({cliPath(), "--socket", daemon_.socket().string(), "export",
                                          std::to_string(list[0].pid()), "--format", "dot", "--out", dot.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dot);
  std::string line;
  uint64_t arrows = 0, two_addresses = 0;
  while (std::getline(in, line)) {
    if (line.find(" -> ") == std::string::npos) continue;
    ++arrows;
    two_addresses += line.find("\\n") != std::string::npos;
  }
  EXPECT_EQ(arrows, c.pairs);
  EXPECT_EQ(two_addresses, c.dependences - c.pairs);  // no pair here shares three
}

TEST_F(TaskOracleTest, StrassenWithSeveralInItems) {
  Checked c = check("strassen", "256");
  EXPECT_GT(c.tasks, 9000u);
  EXPECT_GT(c.pairs, 5000u);
}

// mutexinoutset, inoutset, depobj and one address twice in a task, under
// three parents that share the addresses.
TEST_F(TaskOracleTest, SetsDepobjsAndRepeatedAddresses) {
  Checked c = check("sets", "3000");
  EXPECT_GT(c.tasks, 9000u);
  EXPECT_GT(c.pairs, 5000u);
}

}  // namespace
}  // namespace nk::test
