// The PMPI agent end to end: real Open MPI jobs (mpirun, 4 ranks,
// oversubscribed) with libnodekeeper-pmpi preloaded, two real daemons as
// two emulated nodes ("a" runs ranks 0-1, "b" ranks 2-3), symptoms read
// back from the daemons over gRPC.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

namespace nk::test {
namespace {

int64_t realtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class PmpiAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (envOr("NK_MPI_CHECK").empty() || envOr("NK_PMPI_LIB").empty()) GTEST_SKIP() << "no MPI programs built";
    ASSERT_TRUE(node_a_.start(dir_ / "a")) << node_a_.lastError();
    ASSERT_TRUE(node_b_.start(dir_ / "b")) << node_b_.lastError();
  }
  void TearDown() override {
    node_a_.stop();
    node_b_.stop();
  }

  // mpirun's MPMD form: ranks 0-1 on node a, 2-3 on node b.
  std::vector<std::string> mpirun(const std::vector<std::string>& program, bool agent = true,
                                  const std::string& socket_a = "", const std::string& socket_b = "",
                                  const std::string& executable = envOr("NK_MPI_CHECK")) {
    std::vector<std::string> argv = {"/usr/bin/env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                     "OMPI_MCA_btl=self,vader", "OMPI_MCA_rmaps_base_oversubscribe=1",
                                     "mpirun", "--oversubscribe", "--bind-to", "none"};
    auto node = [&](const std::string& name, const std::string& socket) {
      std::vector<std::string> part = {"-np", "2"};
      if (agent) {
        auto preload = pmpiAgentMpirunArgs();
        part.insert(part.end(), preload.begin(), preload.end());
        part.insert(part.end(), {"-x", "NODEKEEPER_SOCKET=" + socket, "-x",
                                 "NODEKEEPER_NODE=" + name, "-x", "NODEKEEPER_PMPI_DEADLINE_MS=" + std::to_string(deadline_ms_), "-x",
                                 "NODEKEEPER_PMPI_HEARTBEAT_MS=100"});
        for (const std::string& e : extra_env_) part.insert(part.end(), {"-x", e});
      }
      part.push_back(executable);
      part.insert(part.end(), program.begin(), program.end());
      return part;
    };
    auto a = node("a", socket_a.empty() ? node_a_.socket().string() : socket_a);
    auto b = node("b", socket_b.empty() ? node_b_.socket().string() : socket_b);
    argv.insert(argv.end(), a.begin(), a.end());
    argv.push_back(":");
    argv.insert(argv.end(), b.begin(), b.end());
    return argv;
  }

  static std::unique_ptr<v1::FaultsService::Stub> stub(const DaemonProcess& d) {
    return v1::FaultsService::NewStub(
        grpc::CreateChannel("unix:" + d.socket().string(), grpc::InsecureChannelCredentials()));
  }

  static std::vector<v1::Symptom> symptoms(const DaemonProcess& d) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::WatchSymptomsRequest request;
    auto reader = stub(d)->WatchSymptoms(&context, request);
    std::vector<v1::Symptom> out;
    v1::Symptom s;
    while (reader->Read(&s)) out.push_back(s);
    EXPECT_TRUE(reader->Finish().ok());
    return out;
  }

  static std::vector<v1::Job> jobs(const DaemonProcess& d) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::JobList list;
    EXPECT_TRUE(stub(d)->ListJobs(&context, v1::ListJobsRequest(), &list).ok());
    return {list.jobs().begin(), list.jobs().end()};
  }

  static std::vector<v1::FaultReport> faults(const DaemonProcess& d) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    auto reader = stub(d)->WatchFaults(&context, v1::WatchFaultsRequest());
    std::vector<v1::FaultReport> out;
    v1::FaultReport f;
    while (reader->Read(&f)) out.push_back(f);
    EXPECT_TRUE(reader->Finish().ok());
    return out;
  }

  // The pid of `rank` as registered at `d`; -1 when it is not.
  static pid_t pidOfRank(const DaemonProcess& d, uint32_t rank) {
    for (const auto& j : jobs(d))
      for (const auto& r : j.ranks())
        if (r.rank() == rank) return r.pid();
    return -1;
  }

  // The pids of the ranks registered at `d`.
  static std::vector<pid_t> rankPids(const DaemonProcess& d) {
    std::vector<pid_t> out;
    for (const auto& j : jobs(d))
      for (const auto& r : j.ranks()) out.push_back(r.pid());
    return out;
  }

  // A 4-rank job that runs for a minute unless ended: started, its ranks
  // registered at both daemons, and a few steps in.
  bool startLongJob(BackgroundProgram& job) {
    if (!job.start(mpirun({"hang", "600", "100"}), dir_ / "job.out", dir_ / "job.err")) return false;
    for (int i = 0; i < 300; ++i) {
      if (rankPids(node_a_).size() == 2 && rankPids(node_b_).size() == 2 &&
          job.out().find("step 3") != std::string::npos)
        return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  // The job as the daemon lists it once it said the job was cancelled; -1
  // when it did not within `patience`.
  static int cancelledBy(const DaemonProcess& d, std::chrono::milliseconds patience = 20s) {
    for (auto until = std::chrono::steady_clock::now() + patience; std::chrono::steady_clock::now() < until;) {
      for (const auto& j : jobs(d))
        if (j.cancelled_by_signal() != 0) return j.cancelled_by_signal();
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }

  // After a cancellation: no fault and no rank_exited symptom at either
  // daemon, after long enough for a crash to have been localised and
  // published (several heartbeat periods and a probe round).
  void expectNoFaultAfterTheCancellation(const std::string& job_err) {
    std::this_thread::sleep_for(4s);
    for (const DaemonProcess* d : {&node_a_, &node_b_}) {
      for (const auto& f : faults(*d)) ADD_FAILURE() << "a fault for a cancelled job: " << f.DebugString() << job_err;
      for (const auto& s : symptoms(*d))
        EXPECT_NE(s.kind(), v1::SYMPTOM_KIND_RANK_EXITED) << s.DebugString();
    }
  }


  // Rank 3 stopped while running `mode` ("hang" or "ihang"): the first
  // response timeout a rank on node a reports.
  std::optional<v1::Symptom> firstTimeoutWithRankThreeStopped(const std::string& mode, int64_t* stopped_ns);
  void expectNodeListFrom(const std::string& expected_from);

  TempDir dir_{"pmpi", TempDir::Access::kShared};
  DaemonProcess node_a_, node_b_;
  int deadline_ms_ = 1000;  // NODEKEEPER_PMPI_DEADLINE_MS of the next mpirun()
  std::vector<std::string> extra_env_;  // NAME=VALUE for the ranks of the next mpirun()
};

std::map<int, std::string> checksums(const std::string& out) {
  std::regex checksum("rank +(\\d+) +checksum +(\\S+)");
  std::map<int, std::string> m;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), checksum); it != std::sregex_iterator(); ++it)
    m[std::stoi((*it)[1])] = (*it)[2];
  return m;
}

// Fortran programs (mpif.h and `use mpi`) reach MPI through Open MPI's
// Fortran bindings, which the agent wraps itself: same results, and the
// ranks register.
TEST_F(PmpiAgentTest, FortranProgramsGiveTheSameResultsWithTheAgent) {
  for (const char* variable : {"NK_MPI_CHECK_F", "NK_MPI_CHECK_USE"}) {
    std::string program = envOr(variable);
    if (program.empty()) GTEST_SKIP() << "no Fortran compiler";
    ProcessResult without = runProgram(mpirun({}, false, "", "", program), std::nullopt, 120s);
    ASSERT_EQ(without.exit_code, 0) << without.out << without.err;
    ProcessResult with = runProgram(mpirun({}, true, "", "", program), std::nullopt, 120s);
    ASSERT_EQ(with.exit_code, 0) << with.out << with.err;
    EXPECT_EQ(checksums(without.out).size(), 4u) << without.out;
    EXPECT_EQ(checksums(with.out), checksums(without.out)) << with.out;
    EXPECT_NE(with.out.find("ok"), std::string::npos) << with.out;
  }
  EXPECT_EQ(jobs(node_a_).size(), 2u);  // both programs registered
}

TEST_F(PmpiAgentTest, CorrectnessRunGivesTheSameResultsWithTheAgent) {
  ProcessResult without = runProgram(mpirun({"correctness"}, false), std::nullopt, 120s);
  ASSERT_EQ(without.exit_code, 0) << without.out << without.err;
  ProcessResult with = runProgram(mpirun({"correctness"}), std::nullopt, 120s);
  ASSERT_EQ(with.exit_code, 0) << with.out << with.err;
  auto sums = checksums;
  EXPECT_EQ(sums(without.out).size(), 4u) << without.out;
  EXPECT_EQ(sums(with.out), sums(without.out));
  EXPECT_NE(with.out.find("ok"), std::string::npos) << with.out;
  // Every rank registered with its own node's daemon; rank 0 gave the nodes.
  auto at_a = jobs(node_a_);
  ASSERT_EQ(at_a.size(), 1u);
  EXPECT_EQ(at_a[0].size(), 4u);
  EXPECT_EQ(at_a[0].ranks_size(), 2);
  EXPECT_EQ(at_a[0].nodes_size(), 2);
  auto at_b = jobs(node_b_);
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_b[0].ranks_size(), 2);
  EXPECT_EQ(at_b[0].nodes_size(), 2);  // each node's lowest rank gave its daemon the nodes
  // The run has its deliberate error returns (an invalid rank under
  // MPI_ERRORS_RETURN); no timeout.
  for (const auto* d : {&node_a_, &node_b_})
    for (const auto& s : symptoms(*d)) EXPECT_NE(s.kind(), v1::SYMPTOM_KIND_RESPONSE_TIMEOUT) << s.DebugString();
}

TEST_F(PmpiAgentTest, AFaultFreeAllToAllRunHasNoSymptom) {
  ProcessResult run = runProgram(mpirun({"alltoall", "100"}), std::nullopt, 120s);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("ok 100"), std::string::npos) << run.out;
  EXPECT_TRUE(symptoms(node_a_).empty());
  EXPECT_TRUE(symptoms(node_b_).empty());
}

std::optional<v1::Symptom> PmpiAgentTest::firstTimeoutWithRankThreeStopped(const std::string& mode,
                                                                            int64_t* stopped_ns) {
  BackgroundProgram job;
  EXPECT_TRUE(job.start(mpirun({mode, "40", "100"}), dir_ / "job.out", dir_ / "job.err"));
  pid_t rank3 = -1;
  for (int i = 0; i < 100 && rank3 < 0; ++i) {
    std::this_thread::sleep_for(100ms);
    rank3 = pidOfRank(node_b_, 3);
  }
  EXPECT_GT(rank3, 0) << job.err();
  if (rank3 <= 0) return std::nullopt;
  // Let a few steps pass, so the stop lands mid-run.
  for (int i = 0; i < 100 && job.out().find("step 3") == std::string::npos; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(::kill(rank3, SIGSTOP), 0);
  *stopped_ns = realtimeNs();

  std::optional<v1::Symptom> found;
  for (int i = 0; i < 60 && !found; ++i) {
    std::this_thread::sleep_for(100ms);
    for (const auto& s : symptoms(node_a_))
      if (s.kind() == v1::SYMPTOM_KIND_RESPONSE_TIMEOUT && !found) found = s;
  }
  ::kill(rank3, SIGCONT);
  EXPECT_EQ(job.wait(60s), 0) << job.err();
  EXPECT_NE(job.out().find("done"), std::string::npos) << job.out();
  EXPECT_TRUE(found) << job.err();
  return found;
}

// Rank 3 stopped: the ranks waiting on it in MPI_Allreduce report a
// response timeout once the deadline (1 s) passes, and the daemons name
// rank 3 on node b from the ranks' progress; SIGCONT lets the job finish.
TEST_F(PmpiAgentTest, AStoppedRankIsNamedByTheRanksThatWaitOnIt) {
  int64_t stopped_ns = 0;
  auto found = firstTimeoutWithRankThreeStopped("hang", &stopped_ns);
  ASSERT_TRUE(found);
  const v1::Symptom& first = *found;
  EXPECT_EQ(first.operation(), "MPI_Allreduce") << first.DebugString();
  ASSERT_EQ(first.suspect_ranks_size(), 1) << first.DebugString();
  EXPECT_EQ(first.suspect_ranks(0), 3u);
  EXPECT_EQ(first.suspect_node(), "b");
  EXPECT_LT(first.reporter_rank(), 2u);  // from a rank on node a
  // How soon is measured, not asserted (a busy host delays it): the soak's table has it.
  std::printf("response timeout %.0f ms after the stop (deadline %d ms)\n",
              static_cast<double>(first.timestamp_ns() - stopped_ns) / 1e6, deadline_ms_);
}

// The same through the program's own MPI_Iallreduce and MPI_Wait: the wait
// is reported as the collective it waits for (its communicator and number
// there), so the daemons find rank 3 the same way.
TEST_F(PmpiAgentTest, AStoppedRankIsNamedByTheRanksThatWaitOnItsNonblockingCollective) {
  int64_t stopped_ns = 0;
  auto found = firstTimeoutWithRankThreeStopped("ihang", &stopped_ns);
  ASSERT_TRUE(found);
  const v1::Symptom& first = *found;
  EXPECT_EQ(first.operation(), "MPI_Wait") << first.DebugString();
  EXPECT_EQ(first.communicator(), "world") << first.DebugString();
  EXPECT_GE(first.collective_seq(), 3u) << first.DebugString();
  EXPECT_EQ(first.communicator_members_size(), 4) << first.DebugString();
  EXPECT_NE(first.detail().find("MPI_Iallreduce"), std::string::npos) << first.DebugString();
  ASSERT_EQ(first.suspect_ranks_size(), 1) << first.DebugString();
  EXPECT_EQ(first.suspect_ranks(0), 3u);
  EXPECT_EQ(first.suspect_node(), "b");
  EXPECT_LT(first.reporter_rank(), 2u);
  // How soon is measured, not asserted (a busy host delays it): the soak's table has it.
  std::printf("response timeout %.0f ms after the stop (deadline %d ms)\n",
              static_cast<double>(first.timestamp_ns() - stopped_ns) / 1e6, deadline_ms_);
}

// The calls this agent covers beyond the first cut are the agent's own
// entry points, not Open MPI's: a C call or a Fortran one (any mangling)
// missing from the library would reach PMPI unseen.
TEST_F(PmpiAgentTest, TheAgentHasItsOwnEntryPointForEveryCoveredCall) {
  // The library's own dynamic symbols (loading it here would start Open
  // MPI in the test process).
  ProcessResult nm = runProgram({"nm", "-D", "--defined-only", envOr("NK_PMPI_LIB")}, std::nullopt, 30s);
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  std::set<std::string> defined;
  std::regex line("^[0-9a-fA-F]+ [TW] (\\S+)$");
  std::istringstream lines(nm.out);
  for (std::string l; std::getline(lines, l);)
    if (std::smatch m; std::regex_match(l, m, line)) defined.insert(m[1]);
  const std::vector<std::string> with_fortran = {
      "Sendrecv", "Probe", "Waitany", "Waitsome", "Test", "Testall", "Testany", "Testsome", "Ibarrier", "Ibcast",
      "Ireduce", "Iallreduce", "Iallgather", "Iallgatherv", "Ialltoall", "Ialltoallv", "Igather", "Igatherv",
      "Iscatter", "Iscatterv", "Ireduce_scatter", "Ireduce_scatter_block", "Iscan", "Iexscan", "Comm_create_group",
      "Intercomm_create", "Intercomm_merge"};
  for (const std::string& name : with_fortran) {
    EXPECT_TRUE(defined.count("MPI_" + name)) << "MPI_" << name;
    std::string lower = "mpi_" + name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string upper = lower;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const std::string& symbol : {lower + "_", lower + "__", lower, upper})
      EXPECT_TRUE(defined.count(symbol)) << symbol;
  }
}

// A Fortran program's MPI_Sendrecv, MPI_Probe, MPI_Waitany, MPI_Waitsome
// (and MPI_Recv on an intercommunicator) reach the agent: with each odd
// rank sleeping 700 ms before it answers its even partner and a 200 ms
// deadline, the even ranks report a response timeout in each, naming the
// partner's world rank (on the intercommunicator the partner is remote
// rank k of the odd group: world rank 2k+1, not local rank k).
TEST_F(PmpiAgentTest, FortranWaitsThatPassTheDeadlineAreReported) {
  deadline_ms_ = 200;
  for (const char* variable : {"NK_MPI_CHECK_F", "NK_MPI_CHECK_USE"}) {
    std::string program = envOr(variable);
    if (program.empty()) GTEST_SKIP() << "no Fortran compiler";
    const size_t seen_a = symptoms(node_a_).size(), seen_b = symptoms(node_b_).size();
    ProcessResult run = runProgram(mpirun({"slow", "700"}, true, "", "", program), std::nullopt, 120s);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_NE(run.out.find("ok"), std::string::npos) << run.out;
    for (auto [daemon, seen, waiter, partner] :
         {std::tuple{&node_a_, seen_a, 0u, 1u}, std::tuple{&node_b_, seen_b, 2u, 3u}}) {
      std::vector<v1::Symptom> all = symptoms(*daemon);
      for (const char* operation : {"MPI_Sendrecv", "MPI_Probe", "MPI_Waitany", "MPI_Waitsome", "MPI_Recv"}) {
        bool reported = false;
        std::string others;
        for (size_t i = seen; i < all.size(); ++i) {
          const v1::Symptom& s = all[i];
          if (s.kind() != v1::SYMPTOM_KIND_RESPONSE_TIMEOUT || s.operation() != operation ||
              s.reporter_rank() != waiter)
            continue;
          if (s.suspect_ranks_size() == 1 && s.suspect_ranks(0) == partner) reported = true;
          else others += s.DebugString();
        }
        EXPECT_TRUE(reported) << variable << ": no timeout in " << operation << " from rank " << waiter
                              << " naming rank " << partner << "; other timeouts there: " << others;
      }
    }
  }
}

TEST_F(PmpiAgentTest, WithoutADaemonTheJobRunsOnUnchanged) {
  auto nowhere = (dir_ / "none.sock").string();
  ProcessResult run = runProgram(mpirun({"alltoall", "20"}, true, nowhere, nowhere), std::nullopt, 120s);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("ok 20"), std::string::npos) << run.out;
  // One line per node, from its lowest rank.
  size_t lines = 0;
  for (size_t at = run.err.find("nodekeeper-pmpi: nodekeeperd not reachable"); at != std::string::npos;
       at = run.err.find("nodekeeper-pmpi: nodekeeperd not reachable", at + 1))
    ++lines;
  EXPECT_EQ(lines, 2u) << run.err;
}

TEST_F(PmpiAgentTest, RanksRegisterAgainWithADaemonThatRestarted) {
  BackgroundProgram job;
  ASSERT_TRUE(job.start(mpirun({"hang", "60", "100"}), dir_ / "job.out", dir_ / "job.err"));
  auto ranksAt = [&](const DaemonProcess& d) {
    size_t n = 0;
    for (const auto& j : jobs(d)) n += static_cast<size_t>(j.ranks_size());
    return n;
  };
  bool registered = false;
  for (int i = 0; i < 300 && !(registered = ranksAt(node_a_) == 2); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(registered) << job.err();
  node_a_.stop();
  ASSERT_TRUE(node_a_.start(dir_ / "a")) << node_a_.lastError();
  // The restarted daemon knows nothing of the job until its ranks are back.
  bool again = false;
  for (int i = 0; i < 500 && !(again = ranksAt(node_a_) == 2); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(again) << job.err();
  auto listed = jobs(node_a_);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].nodes_size(), 2) << listed[0].DebugString();  // the node list came back too
  EXPECT_EQ(job.wait(120s), 0) << job.out() << job.err();
  EXPECT_NE(job.err().find("registered again with nodekeeperd"), std::string::npos) << job.err();
}

// Ctrl-C of mpirun (it ends the ranks itself): each daemon lists the job as
// cancelled, and no crash, hang or node down is raised.
TEST_F(PmpiAgentTest, SigintToMpirunCancelsTheJobWithoutAFault) {
  BackgroundProgram job;
  ASSERT_TRUE(startLongJob(job)) << job.err();
  ASSERT_EQ(::kill(job.pid(), SIGINT), 0);
  EXPECT_NE(job.wait(60s), 0);
  for (const DaemonProcess* d : {&node_a_, &node_b_}) {
    int signal = cancelledBy(*d);
    EXPECT_TRUE(signal == SIGINT || signal == SIGTERM || signal == SIGHUP) << signal << d->lastError();
  }
  expectNoFaultAfterTheCancellation(job.err());
}

// scancel's way: SIGTERM to every rank.
TEST_F(PmpiAgentTest, SigtermToTheRanksCancelsTheJobWithoutAFault) {
  BackgroundProgram job;
  ASSERT_TRUE(startLongJob(job)) << job.err();
  for (const DaemonProcess* d : {&node_a_, &node_b_})
    for (pid_t pid : rankPids(*d)) EXPECT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_NE(job.wait(60s), 0);
  EXPECT_EQ(cancelledBy(node_a_), SIGTERM) << node_a_.lastError();
  EXPECT_EQ(cancelledBy(node_b_), SIGTERM) << node_b_.lastError();
  expectNoFaultAfterTheCancellation(job.err());
}

// `name`'s value in the environment of process `pid`; "" when unset.
std::string environmentOf(pid_t pid, const std::string& name) {
  const std::string env = readFile("/proc/" + std::to_string(pid) + "/environ");
  const std::string prefix = name + "=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    if (env.compare(at, prefix.size(), prefix) == 0) return env.substr(at + prefix.size(), end - at - prefix.size());
    at = end + 1;
  }
  return "";
}

// What the running ranks' own environments say (mpirun sets
// OMPI_COMM_WORLD_RANK, the test NODEKEEPER_NODE per node): node -> ranks.
std::map<std::string, std::set<uint32_t>> nodesFromEnvironments(const std::vector<pid_t>& pids) {
  std::map<std::string, std::set<uint32_t>> out;
  for (pid_t pid : pids) {
    std::string node = environmentOf(pid, "NODEKEEPER_NODE"), rank = environmentOf(pid, "OMPI_COMM_WORLD_RANK");
    if (!node.empty() && !rank.empty()) out[node].insert(static_cast<uint32_t>(std::stoul(rank)));
  }
  return out;
}

void PmpiAgentTest::expectNodeListFrom(const std::string& expected_from) {
  extra_env_.push_back("NODEKEEPER_PMPI_VERBOSE=1");
  BackgroundProgram job;
  ASSERT_TRUE(startLongJob(job)) << job.err();
  std::vector<pid_t> pids = rankPids(node_a_), pids_b = rankPids(node_b_);
  pids.insert(pids.end(), pids_b.begin(), pids_b.end());
  const auto oracle = nodesFromEnvironments(pids);
  ASSERT_EQ(oracle.size(), 2u);
  for (const DaemonProcess* d : {&node_a_, &node_b_}) {
    std::optional<v1::Job> listed;
    for (int i = 0; i < 400 && !listed; ++i) {
      for (const auto& j : jobs(*d))
        if (j.nodes_size() > 0) listed = j;
      if (!listed) std::this_thread::sleep_for(50ms);
    }
    ASSERT_TRUE(listed) << job.err();
    EXPECT_EQ(listed->nodes_from(), expected_from) << listed->DebugString() << job.err();
    std::map<std::string, std::set<uint32_t>> nodes;
    for (const auto& n : listed->nodes()) {
      EXPECT_EQ(n.endpoint(), "unix:" + (n.node() == "a" ? node_a_ : node_b_).socket().string());
      nodes[n.node()].insert(n.ranks().begin(), n.ranks().end());
    }
    EXPECT_EQ(nodes, oracle) << listed->DebugString();
    // The job is PMIx's namespace either way (PMIX_NAMESPACE in the ranks).
    EXPECT_EQ(listed->job_id(), environmentOf(pids[0], "PMIX_NAMESPACE")) << listed->DebugString();
  }
  // A busy node (NK_TEST_HOST_LOAD) answers late; that is no fault.
  for (const DaemonProcess* d : {&node_a_, &node_b_})
    for (const auto& f : faults(*d)) ADD_FAILURE() << "a fault in a healthy job: " << f.DebugString() << job.err();
  // Said (rank 0 only) when PMIx was not used.
  const std::string said = "learning the job's nodes with MPI_Allgather";
  const std::string err = job.err();
  EXPECT_EQ(err.find(said) != std::string::npos, expected_from == "mpi") << err;
  EXPECT_EQ(err.find(said), err.rfind(said)) << err;
  ASSERT_EQ(::kill(job.pid(), SIGINT), 0);
  EXPECT_NE(job.wait(60s), -1);
}

TEST_F(PmpiAgentTest, UnderMpirunTheNodeListComesFromPmix) { expectNodeListFrom("pmix"); }

TEST_F(PmpiAgentTest, WithPmixOffTheNodeListComesFromTheAgentsAllgather) {
  extra_env_ = {"NODEKEEPER_PMPI_PMIX=off"};
  expectNodeListFrom("mpi");
}

// A crash stays a crash: SIGSEGV in rank 3 while the others run is a
// process_crash naming it, whatever mpirun does to the others after.
TEST_F(PmpiAgentTest, SigsegvInOneRankIsStillAProcessCrash) {
  BackgroundProgram job;
  ASSERT_TRUE(startLongJob(job)) << job.err();
  const pid_t rank3 = pidOfRank(node_b_, 3);
  ASSERT_GT(rank3, 0);
  ASSERT_EQ(::kill(rank3, SIGSEGV), 0);
  EXPECT_NE(job.wait(60s), 0);
  // mpirun then ends the other ranks, possibly by SIGKILL (crashes of their
  // own, as before): the test looks for rank 3's.
  auto namesRankThree = [](const v1::FaultReport& f) {
    return f.kind() == v1::FAULT_KIND_PROCESS_CRASH && f.node() == "b" &&
           std::find(f.ranks().begin(), f.ranks().end(), 3u) != f.ranks().end();
  };
  std::optional<v1::FaultReport> crash;
  std::string seen;
  for (int i = 0; i < 200 && !crash; ++i) {
    seen.clear();
    for (const DaemonProcess* d : {&node_a_, &node_b_})
      for (const auto& f : faults(*d)) {
        seen += f.DebugString();
        if (namesRankThree(f)) crash = f;
      }
    if (!crash) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(crash) << seen << node_a_.lastError() << node_b_.lastError();
  // Node b, where the crash was, does not take the job for cancelled.
  for (const auto& j : jobs(node_b_)) EXPECT_EQ(j.cancelled_by_signal(), 0) << j.DebugString();
}

// Rank 3 on node b crashes; mpirun then ends node a's ranks with SIGTERM.
// Node a sees only SIGTERM endings, but the crash reaches it (it is b's FLN
// and the root): it does not list the job as cancelled either.
TEST_F(PmpiAgentTest, ACrashOnNodeBIsNotListedAsACancellationOnNodeA) {
  BackgroundProgram job;
  ASSERT_TRUE(startLongJob(job)) << job.err();
  const pid_t rank3 = pidOfRank(node_b_, 3);
  ASSERT_GT(rank3, 0);
  ASSERT_EQ(::kill(rank3, SIGSEGV), 0);
  EXPECT_NE(job.wait(60s), 0);
  // Long enough for the cancellation grace (1 s, grown on a busy host) to
  // have passed: a cancellation would be listed by then.
  EXPECT_EQ(cancelledBy(node_a_, 12s), -1) << node_a_.lastError();
  EXPECT_EQ(node_a_.lastError().find("cancelled (SIG"), std::string::npos) << node_a_.lastError();
}

}  // namespace
}  // namespace nk::test
