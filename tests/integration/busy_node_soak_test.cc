// The busy-node soak (issue 17): every host CPU kept busy several times
// over for the whole run, four real nodekeeperd as four emulated nodes
// n1..n4 of one fault tree (each on a loopback address of its own, TCP
// between them with a shared peer token), and many Open MPI jobs of the
// project's own check programs across them, one rank per node (rank i-1 on
// n<i>, so n1 is every job's root) with libnodekeeper-pmpi preloaded:
//  - fault-free runs (mpi_check alltoall and correctness, the Fortran
//    mpi_check_f and mpi_check_use): no fault at any daemon;
//  - jobs cancelled by SIGINT to mpirun and by SIGTERM to every rank: each
//    listed as cancelled at every node, no fault;
//  - a node killed mid-job (its daemon and its rank SIGKILLed): node_down
//    about it, naming its rank; the daemon is then started again;
//  - a rank stopped mid-job (SIGSTOP): process_hang naming it.
// Faults, jobs and symptoms are read back with the CLI (`--json`).
//
// The counts come from the environment, short by default (the suite):
//   NK_SOAK_RUNS (10), NK_SOAK_SIGINT (5), NK_SOAK_SIGTERM (5),
//   NK_SOAK_KILLS (3), NK_SOAK_STOPS (3), NK_SOAK_DEADLINE_MS (1000, the
//   agent's NODEKEEPER_PMPI_DEADLINE_MS), the load NK_TEST_HOST_LOAD (4 per
//   CPU when unset); `./run soak` runs the long form. How long detection
//   took is measured and printed in a table at the end, never asserted.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "testlib/daemon_cluster.h"
#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/host_load.h"
#include "testlib/mpi_job.h"
#include "testlib/processes.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace nk::test {
namespace {

constexpr int kNodes = 4;
constexpr double kDefaultLoadPerCpu = 4;

int countFromEnv(const char* name, int fallback) {
  const std::string value = envOr(name);
  if (value.empty()) return fallback;
  return std::max(0, std::atoi(value.c_str()));
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t at = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

std::string faultText(const Json& f) {
  std::string text = f.value("job_id", "?") + ": " + f.value("kind", "?") + " about " + f.value("node", "?") +
                     " ranks " + f.value("ranks", Json::array()).dump() + ", localised by " +
                     f.value("localised_by", "?") + "; evidence:";
  for (const auto& line : f.value("evidence", Json::array())) text += " | " + line.get<std::string>();
  return text;
}

// What one kind of job came to, for the table.
struct Phase {
  std::string title;
  std::string prefix;  // of its jobs' ids
  int jobs = 0;
  int as_expected = 0;  // ran fine / listed cancelled at every node / found with the right kind, node and rank
  std::vector<double> latency_ms;            // signal to localised fault (killed node, stopped rank)
  std::map<std::string, std::string> target;  // job id -> the node its expected fault is about
};

// The four daemons, the load and the tally, shared by the tests in order.
struct Soak {
  std::shared_ptr<HostLoad> load;
  double load_per_cpu = 0;
  TempDir dir{"soak", TempDir::Access::kShared};
  std::filesystem::path token;
  DaemonCluster cluster{dir.path()};
  int deadline_ms = 1000;
  Phase runs{"fault-free runs", "soak-run-"};
  Phase sigint{"SIGINT to mpirun", "soak-int-"};
  Phase sigterm{"SIGTERM to the ranks", "soak-term-"};
  Phase kills{"killed node", "soak-kill-"};
  Phase stops{"stopped rank", "soak-stop-"};
};
std::unique_ptr<Soak> soak;

class BusyNodeSoakTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (envOr("NK_MPI_CHECK").empty() || envOr("NK_PMPI_LIB").empty()) return;
    soak = std::make_unique<Soak>();
    // The suite's own load when `./run soak` sets one (the daemons hold the
    // same), else this test's: the host is busy from the first daemon on.
    soak->load = HostLoad::fromEnvironment();
    soak->load_per_cpu = soak->load ? std::atof(envOr("NK_TEST_HOST_LOAD").c_str()) : kDefaultLoadPerCpu;
    if (!soak->load) soak->load = std::make_shared<HostLoad>(kDefaultLoadPerCpu);
    soak->deadline_ms = countFromEnv("NK_SOAK_DEADLINE_MS", 1000);
    soak->token = soak->dir / "token";
    DaemonCluster::writePeerToken(soak->token);
    // SetUp says which did not start.
    std::fputs(soak->cluster.start(kNodes, [](int) { return flags(); }).c_str(), stderr);
  }

  static void TearDownTestSuite() {
    if (!soak) return;
    printTable();
    soak.reset();
  }

  void SetUp() override {
    if (!soak) GTEST_SKIP() << "no MPI programs built";
    for (int i = 1; i <= kNodes; ++i)
      ASSERT_GT(node(i).pid(), 0) << nodeName(i) << " is not running: " << node(i).lastError();
  }

  static DaemonProcess& node(int i) { return soak->cluster.node(i); }

  // --emulate-ignore-host-load: the load is there to take CPU time from the
  // daemons and the ranks, not to heat the emulated cores; driven by it, an
  // emulated node reaches its alarm temperature within twenty minutes, and
  // its overheating, true to the model, is not what this soak looks for.
  static std::vector<std::string> flags() {
    return {"--peer-token", soak->token.string(), "--emulate-ignore-host-load"};
  }

  static std::vector<std::string> mpirun(const std::string& job_id, const std::string& program,
                                         const std::vector<std::string>& args) {
    std::vector<std::string> command = {program};
    command.insert(command.end(), args.begin(), args.end());
    return soak->cluster.mpirun(
        {"NODEKEEPER_JOB_ID=" + job_id, "NODEKEEPER_PMPI_DEADLINE_MS=" + std::to_string(soak->deadline_ms)}, command);
  }

  static bool startJob(MpiJob& job, const std::string& job_id, const std::string& program,
                       const std::vector<std::string>& args) {
    std::filesystem::create_directories(soak->dir / "jobs");
    return job.start(mpirun(job_id, program, args), soak->dir / "jobs" / (job_id + ".out"),
                     soak->dir / "jobs" / (job_id + ".err"));
  }

  static Json cliJson(int i, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {cliPath(), "--socket", node(i).socket().string(), "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = runProgram(argv, std::nullopt, 30s);
    if (r.exit_code != 0) {
      ADD_FAILURE() << "nodekeeper " << args[0] << " at " << nodeName(i) << ": " << r.out << r.err;
      return Json();
    }
    Json parsed = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed.is_discarded() ? Json() : parsed;
  }

  static Json faults(int i) {
    Json list = cliJson(i, {"faults"});
    return list.is_array() ? list : Json::array();
  }

  // The job as n<i> lists it; null when it does not.
  static Json listedJob(int i, const std::string& job_id) {
    Json jobs = cliJson(i, {"jobs"});
    if (jobs.contains("jobs"))
      for (const auto& j : jobs["jobs"])
        if (j.value("job_id", "") == job_id) return j;
    return Json();
  }

  static std::string logs() {
    std::string out;
    for (int i = 1; i <= kNodes; ++i) out += "--- " + nodeName(i) + ":\n" + node(i).lastError();
    return out;
  }

  // The node whose daemon a rank talks to (its NODEKEEPER_SOCKET); 0 if none.
  static int nodeOfRank(pid_t pid) {
    std::string environ = readFile("/proc/" + std::to_string(pid) + "/environ");
    for (size_t at = 0; at < environ.size();) {
      size_t end = environ.find('\0', at);
      if (end == std::string::npos) end = environ.size();
      const std::string_view variable(environ.data() + at, end - at);
      for (int i = 1; i <= kNodes; ++i)
        if (variable == "NODEKEEPER_SOCKET=" + node(i).socket().string()) return i;
      at = end + 1;
    }
    return 0;
  }

  // A long job (mpi_check hang) in its stride: every daemon built its tree
  // (so each has its rank and the node list), and a few steps went by.
  // Returns the ranks' pids by node ([1..kNodes]), found below mpirun (the
  // CLI takes a second a call on a host this busy), empty (with a failure)
  // when it did not get there.
  static std::vector<pid_t> waitUntilRunning(MpiJob& job, const std::string& job_id) {
    const std::string tree = "job " + job_id + ": fault tree of " + std::to_string(kNodes) + " nodes";
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (job.wait(0ms) >= 0) {
        ADD_FAILURE() << job_id << " ended before it was running: " << job.err() << logs();
        return {};
      }
      bool trees = true;
      for (int i = 1; i <= kNodes && trees; ++i) trees = node(i).lastError().find(tree) != std::string::npos;
      if (trees && job.out().find("step 3") != std::string::npos) {
        std::vector<pid_t> pids(kNodes + 1, -1);
        for (pid_t p : descendantsOf(job.pid()))
          if (cmdlineOf(p).find("mpi_check") != std::string::npos)
            if (int i = nodeOfRank(p); i > 0) pids[i] = p;
        if (std::all_of(pids.begin() + 1, pids.end(), [](pid_t p) { return p > 0; })) return pids;
      }
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << job_id << " not running after 120 s: " << job.out() << job.err() << logs();
    return {};
  }

  // The first fault at the root n1 about `node_name` in `job_id`, polled.
  static std::optional<Json> waitForFault(const std::string& job_id, const std::string& node_name,
                                          std::chrono::seconds timeout = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& f : faults(1))
        if (f.value("job_id", "") == job_id && f.value("node", "") == node_name) return f;
      std::this_thread::sleep_for(100ms);
    }
    return std::nullopt;
  }

  // The faults every running node published.
  static std::vector<Json> allFaults() {
    std::vector<Json> out;
    for (int i = 1; i <= kNodes; ++i)
      if (node(i).pid() > 0)
        for (const auto& f : faults(i)) out.push_back(f);
    return out;
  }

  // Those of `all` about jobs of `phase` (their ids start with its prefix),
  // less the one each kill or stop expects.
  static std::vector<Json> unexpectedFaults(const Phase& phase, const std::vector<Json>& all) {
    std::vector<Json> out;
    for (const auto& f : all) {
      const std::string job = f.value("job_id", "");
      if (job.rfind(phase.prefix, 0) != 0) continue;
      auto target = phase.target.find(job);
      if (target != phase.target.end() && target->second == f.value("node", "")) continue;
      out.push_back(f);
    }
    return out;
  }

  // Waits long enough for a false fault to be localised and published
  // (heartbeat periods, a probe round), then fails on each about `phases`.
  static void expectNoUnexpectedFault(const std::vector<const Phase*>& phases) {
    std::this_thread::sleep_for(4s);
    const std::vector<Json> all = allFaults();
    for (const Phase* phase : phases)
      for (const auto& f : unexpectedFaults(*phase, all))
        ADD_FAILURE() << "a fault in " << phase->title << ": " << faultText(f);
  }

  // How each daemon lists the job once it found it cancelled: the signal,
  // 0 when it did not within `patience`.
  static std::vector<int> cancelledBy(const std::string& job_id, std::chrono::seconds patience = 30s) {
    std::vector<int> signals(kNodes + 1, 0);
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (int i = 1; i <= kNodes; ++i) {
      while (true) {
        Json j = listedJob(i, job_id);
        if (j.is_object()) signals[i] = j.value("cancelled_by_signal", 0);
        if (signals[i] != 0 || std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::sleep_for(100ms);
      }
    }
    return signals;
  }

  // One job cancelled by `how`: SIGINT to mpirun (Ctrl-C) or SIGTERM to
  // every rank (scancel). True when every node lists it cancelled.
  static bool cancelOne(const std::string& job_id, int how) {
    MpiJob job;
    EXPECT_TRUE(startJob(job, job_id, envOr("NK_MPI_CHECK"), {"hang", "600", "100"}));
    std::vector<pid_t> pids = waitUntilRunning(job, job_id);
    if (pids.empty()) return false;
    if (how == SIGINT) {
      EXPECT_EQ(::kill(job.pid(), SIGINT), 0);
    } else {
      for (int i = 1; i <= kNodes; ++i) EXPECT_EQ(::kill(pids[i], SIGTERM), 0);
    }
    EXPECT_GE(job.wait(60s), 0) << job_id << ": mpirun still runs 60 s after the signal";
    std::vector<int> signals = cancelledBy(job_id);
    bool all = true;
    for (int i = 1; i <= kNodes; ++i) {
      const int s = signals[i];
      const bool cancelled = how == SIGTERM ? s == SIGTERM : (s == SIGINT || s == SIGTERM || s == SIGHUP);
      EXPECT_TRUE(cancelled) << job_id << " at " << nodeName(i) << ": cancelled_by_signal " << s << "\n"
                             << node(i).lastError();
      all = all && cancelled;
    }
    return all;
  }

  static void printTable();
};

// Fault-free runs of the project's own check programs, in turn: not one
// fault at any node.
TEST_F(BusyNodeSoakTest, FaultFreeRunsRaiseNoFault) {
  struct Program {
    std::string path;
    std::vector<std::string> args;
  };
  std::vector<Program> programs = {{envOr("NK_MPI_CHECK"), {"alltoall", "100"}},
                                   {envOr("NK_MPI_CHECK"), {"correctness"}}};
  for (const char* fortran : {"NK_MPI_CHECK_F", "NK_MPI_CHECK_USE"})
    if (!envOr(fortran).empty()) programs.push_back({envOr(fortran), {}});
  const int count = countFromEnv("NK_SOAK_RUNS", 10);
  for (int n = 0; n < count; ++n) {
    const Program& program = programs[n % programs.size()];
    const std::string job_id = soak->runs.prefix + std::to_string(n);
    MpiJob job;
    ASSERT_TRUE(startJob(job, job_id, program.path, program.args));
    ++soak->runs.jobs;
    const int rc = job.wait(180s);
    EXPECT_EQ(rc, 0) << job_id << " (" << program.path << "): " << job.out() << job.err();
    EXPECT_NE(job.out().find("ok"), std::string::npos) << job_id << ": " << job.out();
    if (rc == 0 && job.out().find("ok") != std::string::npos) ++soak->runs.as_expected;
  }
  expectNoUnexpectedFault({&soak->runs});
}

// Ctrl-C of mpirun, then scancel's SIGTERM to every rank: each a
// cancellation at every node, none a crash, a hang or a node down.
TEST_F(BusyNodeSoakTest, CancelledJobsAreCancellationsNotFaults) {
  const int by_sigint = countFromEnv("NK_SOAK_SIGINT", 5);
  const int by_sigterm = countFromEnv("NK_SOAK_SIGTERM", 5);
  for (int n = 0; n < by_sigint; ++n) {
    ++soak->sigint.jobs;
    if (cancelOne(soak->sigint.prefix + std::to_string(n), SIGINT)) ++soak->sigint.as_expected;
  }
  for (int n = 0; n < by_sigterm; ++n) {
    ++soak->sigterm.jobs;
    if (cancelOne(soak->sigterm.prefix + std::to_string(n), SIGTERM)) ++soak->sigterm.as_expected;
  }
  expectNoUnexpectedFault({&soak->sigint, &soak->sigterm});
}

// A node fails mid-job (its daemon, then its rank, SIGKILLed): the root
// finds it down and names its rank; no other node is blamed. The node's
// daemon is then started again for the next job. Never the root n1: the
// nodes after it in turn.
TEST_F(BusyNodeSoakTest, AKilledNodeIsFoundDown) {
  const int count = countFromEnv("NK_SOAK_KILLS", 3);
  for (int n = 0; n < count; ++n) {
    const int victim = 2 + n % (kNodes - 1);
    const std::string job_id = soak->kills.prefix + std::to_string(n);
    soak->kills.target[job_id] = nodeName(victim);
    ++soak->kills.jobs;
    {
      MpiJob job;
      ASSERT_TRUE(startJob(job, job_id, envOr("NK_MPI_CHECK"), {"hang", "600", "100"}));
      std::vector<pid_t> pids = waitUntilRunning(job, job_id);
      ASSERT_FALSE(pids.empty());
      const int64_t killed_ns = wallClockNs();
      node(victim).kill9();
      ::kill(pids[victim], SIGKILL);
      std::optional<Json> fault = waitForFault(job_id, nodeName(victim));
      EXPECT_TRUE(fault) << job_id << ": no fault about " << nodeName(victim) << " within 60 s\n" << logs();
      if (fault) {
        SCOPED_TRACE(faultText(*fault));
        EXPECT_EQ(fault->value("kind", ""), "node_down");
        EXPECT_EQ(fault->value("ranks", std::vector<int>{}), std::vector<int>{victim - 1});
        if (fault->value("kind", "") == "node_down" &&
            fault->value("ranks", std::vector<int>{}) == std::vector<int>{victim - 1})
          ++soak->kills.as_expected;
        soak->kills.latency_ms.push_back(static_cast<double>(fault->value("localised_ns", int64_t{0}) - killed_ns) /
                                         1e6);
      }
      // No other node of the job is blamed while it runs on without one.
      std::this_thread::sleep_for(1500ms);
      for (const auto& f : faults(1))
        if (f.value("job_id", "") == job_id && f.value("node", "") != nodeName(victim))
          ADD_FAILURE() << "a fault about a node that was not killed: " << faultText(f);
      // Its ranks wait for the lost one for ever: the user's Ctrl-C ends it
      // (SIGKILL only if that does not, which the table would show as crashes).
      ::kill(job.pid(), SIGINT);
      job.wait(60s);
    }
    ASSERT_TRUE(soak->cluster.restart(victim)) << nodeName(victim) << " did not start again: " << node(victim).lastError();
  }
}

// A rank stopped mid-job (SIGSTOP): the ranks that wait on it in their
// allreduce pass the agent's deadline (or its daemon sees it stopped), and
// the root finds the rank hung on its node; continued, the job ends well.
// Ranks 1, 2, 3, 0 in turn.
TEST_F(BusyNodeSoakTest, AStoppedRankIsFoundHung) {
  const int count = countFromEnv("NK_SOAK_STOPS", 3);
  for (int n = 0; n < count; ++n) {
    const int rank = (n + 1) % kNodes;
    const int at = rank + 1;
    const std::string job_id = soak->stops.prefix + std::to_string(n);
    soak->stops.target[job_id] = nodeName(at);
    ++soak->stops.jobs;
    MpiJob job;
    // 30 steps of 100 ms: stopped after the third, it has seconds to run
    // yet, and once continued it ends of itself.
    ASSERT_TRUE(startJob(job, job_id, envOr("NK_MPI_CHECK"), {"hang", "30", "100"}));
    std::vector<pid_t> pids = waitUntilRunning(job, job_id);
    ASSERT_FALSE(pids.empty());
    const int64_t stopped_ns = wallClockNs();
    ASSERT_EQ(::kill(pids[at], SIGSTOP), 0);
    std::optional<Json> fault = waitForFault(job_id, nodeName(at));
    ::kill(pids[at], SIGCONT);
    EXPECT_TRUE(fault) << job_id << ": no fault about " << nodeName(at) << " within 60 s\n" << logs();
    if (fault) {
      SCOPED_TRACE(faultText(*fault));
      EXPECT_EQ(fault->value("kind", ""), "process_hang");
      EXPECT_EQ(fault->value("ranks", std::vector<int>{}), std::vector<int>{rank});
      if (fault->value("kind", "") == "process_hang" && fault->value("ranks", std::vector<int>{}) == std::vector<int>{rank})
        ++soak->stops.as_expected;
      soak->stops.latency_ms.push_back(static_cast<double>(fault->value("localised_ns", int64_t{0}) - stopped_ns) /
                                       1e6);
    }
    // The job runs to its end, and no other node of it is blamed.
    EXPECT_EQ(job.wait(120s), 0) << job_id << ": " << job.out() << job.err();
    EXPECT_NE(job.out().find("done"), std::string::npos) << job_id << ": " << job.out();
    std::this_thread::sleep_for(1500ms);
    for (const auto& f : faults(1))
      if (f.value("job_id", "") == job_id && f.value("node", "") != nodeName(at))
        ADD_FAILURE() << "a fault about a node whose rank was not stopped: " << faultText(f);
  }
}

// The table: counts from the tests, and every fault at the nodes now
// (faults published late included), sorted to the phase of its job.
void BusyNodeSoakTest::printTable() {
  std::printf("\nbusy-node soak: %zu spinning processes on %ld CPUs (%.1f per CPU), %d emulated nodes, "
              "agent deadline %d ms\n",
              soak->load ? soak->load->pids().size() : 0, sysconf(_SC_NPROCESSORS_ONLN), soak->load_per_cpu, kNodes,
              soak->deadline_ms);
  std::printf("%-22s %5s %12s %7s %6s %6s %10s %6s\n", "jobs", "runs", "as expected", "faults", "crash", "hang",
              "node_down", "other");
  std::vector<std::string> details;
  const std::vector<Json> all = allFaults();
  for (Phase* phase : {&soak->runs, &soak->sigint, &soak->sigterm, &soak->kills, &soak->stops}) {
    std::map<std::string, int> kinds;
    std::vector<Json> extra = unexpectedFaults(*phase, all);
    for (const auto& f : extra) {
      ++kinds[f.value("kind", "?")];
      details.push_back(faultText(f));
    }
    const int other = static_cast<int>(extra.size()) - kinds["process_crash"] - kinds["process_hang"] - kinds["node_down"];
    std::printf("%-22s %5d %12d %7zu %6d %6d %10d %6d\n", phase->title.c_str(), phase->jobs, phase->as_expected,
                extra.size(), kinds["process_crash"], kinds["process_hang"], kinds["node_down"], other);
  }
  std::printf("(as expected: a run exited 0 with \"ok\"; a cancellation listed as cancelled at all %d nodes; a kill\n"
              " or stop found as node_down / process_hang of its node's rank. faults: any other fault of those jobs)\n",
              kNodes);
  std::printf("%-22s %5s %10s %10s %10s %10s\n", "detection", "found", "p50 ms", "max ms", "p50-dl ms", "max-dl ms");
  const auto& k = soak->kills.latency_ms;
  std::printf("%-22s %5zu %10.0f %10.0f %10s %10s\n", "killed node", k.size(), percentile(k, 0.5), percentile(k, 1.0),
              "-", "-");
  const auto& s = soak->stops.latency_ms;
  const double dl = soak->deadline_ms;
  std::printf("%-22s %5zu %10.0f %10.0f %10.0f %10.0f\n", "stopped rank", s.size(), percentile(s, 0.5),
              percentile(s, 1.0), s.empty() ? 0 : percentile(s, 0.5) - dl, s.empty() ? 0 : percentile(s, 1.0) - dl);
  std::printf("(from the signal to the fault's localised_ns at the root; -dl: less the agent's deadline)\n");
  // The symptoms of the fault-free and cancelled jobs, by kind: no fault
  // came of them, but they show how close the daemons came to one.
  std::map<std::string, std::map<std::string, int>> symptoms;
  for (int i = 1; i <= kNodes; ++i) {
    if (node(i).pid() <= 0) continue;
    Json list = cliJson(i, {"symptoms"});
    if (!list.contains("symptoms")) continue;
    for (const auto& sym : list["symptoms"])
      for (const Phase* phase : {&soak->runs, &soak->sigint, &soak->sigterm})
        if (sym.value("job_id", "").rfind(phase->prefix, 0) == 0) ++symptoms[phase->title][sym.value("kind", "?")];
  }
  for (const auto& [title, kinds] : symptoms) {
    std::printf("symptoms in %s:", title.c_str());
    for (const auto& [kind, n] : kinds) std::printf(" %s %d", kind.c_str(), n);
    std::printf("\n");
  }
  for (const auto& d : details) std::printf("fault: %s\n", d.c_str());
  std::fflush(stdout);
}

}  // namespace
}  // namespace nk::test
