#include "faults/job_registry.h"

#include <gtest/gtest.h>

#include "fake_process_state_reader.h"

namespace nk {
namespace {

using test::FakeProcessStateReader;

class JobRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (pid_t pid : {100, 101, 102, 103, 200, 300}) processes_.set(pid, ProcessState::kRunning);
  }

  static RankRegistration rank(std::string job, uint32_t r, uint32_t size, pid_t pid, uid_t uid = 1000,
                               std::string node = "a", int64_t now = 1000) {
    RankRegistration reg;
    reg.job_id = std::move(job);
    reg.rank = r;
    reg.size = size;
    reg.node = std::move(node);
    reg.pid = pid;
    reg.uid = uid;
    reg.endpoint = "unix:/run/a.sock";
    reg.now_ns = now;
    return reg;
  }
  static ProgressUpdate progress(std::string_view job, uint32_t r, uint64_t world, int64_t now) {
    ProgressUpdate u;
    u.job_id = job;
    u.rank = r;
    u.communicators = {{"world", world}};
    u.current_operation = "MPI_Allreduce";
    u.now_ns = now;
    return u;
  }
  static std::vector<JobNodeRecord> twoNodes() {
    return {{"a", "unix:/run/a.sock", {0, 1}}, {"b", "unix:/run/b.sock", {2, 3}}};
  }
  static std::string errorOf(const Status& status) { return status.ok() ? "ok" : status.error().message; }

  FakeProcessStateReader processes_;
};

TEST_F(JobRegistryTest, RegistersRanksAndAReRegistrationReplacesTheRank) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100)).ok());
  ASSERT_TRUE(jobs.registerRank(rank("j", 1, 4, 101)).ok());
  ASSERT_TRUE(jobs.recordProgress(progress("j", 1, 5, 2000), 101).ok());
  ASSERT_TRUE(jobs.registerRank(rank("j", 1, 4, 102)).ok());

  auto job = jobs.job("j");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->size, 4u);
  EXPECT_EQ(job->uid, 1000u);
  ASSERT_EQ(job->ranks.size(), 2u);
  EXPECT_EQ(job->ranks[0].rank, 0u);
  EXPECT_EQ(job->ranks[1].rank, 1u);
  EXPECT_EQ(job->ranks[1].pid, 102);
  EXPECT_EQ(job->ranks[1].start_time, 1000u);
  EXPECT_EQ(job->ranks[1].last_report_ns, 0);  // the old registration's progress went with it
  EXPECT_TRUE(job->ranks[1].communicators.empty());
  EXPECT_EQ(jobs.size(), 1u);
}

TEST_F(JobRegistryTest, BadRegistrationsNameTheField) {
  JobRegistry jobs(processes_);
  EXPECT_EQ(errorOf(jobs.registerRank(rank("", 0, 4, 100))), "job_id is empty");
  EXPECT_EQ(errorOf(jobs.registerRank(rank("j", 4, 4, 100))), "rank 4 is not below size 4");
  EXPECT_EQ(errorOf(jobs.registerRank(rank("j", 0, 0, 100))), "size is 0: a job has at least one rank");
  EXPECT_EQ(errorOf(jobs.registerRank(rank("j", 0, 4, 100, 1000, ""))),
            "node is empty: give the node's name (NODEKEEPER_NODE or the host name)");
  EXPECT_EQ(errorOf(jobs.registerRank(rank("j", 0, 4, 0))), "pid 0 is not a process id");
  EXPECT_EQ(errorOf(jobs.registerRank(rank("j", 0, 4, 999))), "pid 999 is not a running process");
  EXPECT_EQ(jobs.registerRank(rank(std::string(300, 'x'), 0, 4, 100)).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(jobs.size(), 0u);
}

TEST_F(JobRegistryTest, ARankMustAgreeWithItsJobOnSizeAndUser) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100, 1000)).ok());
  Status size = jobs.registerRank(rank("j", 1, 8, 101, 1000));
  ASSERT_FALSE(size.ok());
  EXPECT_EQ(size.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(size.error().message, "size 8 differs from the size 4 that job 'j' was registered with");

  Status other = jobs.registerRank(rank("j", 1, 4, 101, 2000));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(other.error().message, "job 'j' belongs to uid 1000; a rank of uid 2000 may not join it");
  EXPECT_TRUE(jobs.registerRank(rank("j", 1, 4, 101, 0), /*any_owner=*/true).ok());
  EXPECT_EQ(jobs.job("j")->uid, 1000u);
}

TEST_F(JobRegistryTest, AnEndedJobsIdStartsANewJob) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100, 1000)).ok());
  ASSERT_TRUE(jobs.setNodes("j", twoNodes(), 1100).ok());
  processes_.remove(100);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 2, 200, 2000, "a", 5000)).ok());
  auto job = jobs.job("j");
  EXPECT_EQ(job->size, 2u);
  EXPECT_EQ(job->uid, 2000u);
  EXPECT_TRUE(job->nodes.empty());
  EXPECT_EQ(job->created_ns, 5000);
}

TEST_F(JobRegistryTest, AReusedPidIsGone) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 2, 100)).ok());
  auto job = jobs.job("j");
  EXPECT_EQ(jobs.stateOf(job->ranks[0]), ProcessState::kRunning);
  EXPECT_FALSE(jobs.ended(*job));
  processes_.set(100, ProcessState::kStopped);
  EXPECT_EQ(jobs.stateOf(job->ranks[0]), ProcessState::kStopped);
  processes_.set(100, ProcessState::kRunning, 4242);  // another process with that pid
  EXPECT_EQ(jobs.stateOf(job->ranks[0]), ProcessState::kGone);
  EXPECT_TRUE(jobs.ended(*job));
}

TEST_F(JobRegistryTest, SetNodesChecksEveryRankIsOnExactlyOneNode) {
  JobRegistry jobs(processes_);
  EXPECT_EQ(jobs.setNodes("j", twoNodes(), 1).error().code, ErrorCode::kNotFound);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100)).ok());
  EXPECT_EQ(errorOf(jobs.setNodes("", twoNodes(), 1)), "job_id is empty");
  EXPECT_EQ(errorOf(jobs.setNodes("j", {}, 1)), "nodes is empty: list the job's nodes with their ranks");

  auto nodes = twoNodes();
  nodes[1].node = "";
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "nodes[1].node is empty");
  nodes = twoNodes();
  nodes[0].endpoint = "";
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "nodes[0] (node 'a') has no endpoint");
  nodes = twoNodes();
  nodes[1].ranks = {2, 4};
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "nodes[1] (node 'b') lists rank 4, but job 'j' has size 4");
  nodes = twoNodes();
  nodes[1].ranks = {1, 2, 3};
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "rank 1 is listed twice (on node 'a' and on node 'b')");
  nodes = twoNodes();
  nodes[1].ranks = {2};
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "rank 3 of job 'j' is on no node");
  nodes = {{"a", "unix:/a", {0}}};
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "3 ranks of job 'j' are on no node (1, 2, 3)");
  nodes = {{"a", "unix:/a", {0}}, {"b", "unix:/b", {}}};
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "nodes[1] (node 'b') lists no ranks");
  nodes = {{"a", "unix:/a", {0, 1}}, {"a", "unix:/a", {2, 3}}};
  EXPECT_EQ(errorOf(jobs.setNodes("j", nodes, 1)), "node 'a' at unix:/a is listed twice (nodes[0] and nodes[1])");
  EXPECT_TRUE(jobs.job("j")->nodes.empty());

  // One name at two endpoints: two daemons on one host.
  nodes = {{"a", "unix:/a", {0, 1}}, {"a", "unix:/b", {2, 3}}};
  EXPECT_TRUE(jobs.setNodes("j", nodes, 1).ok());
  ASSERT_TRUE(jobs.setNodes("j", twoNodes(), 2).ok());
  auto job = jobs.job("j");
  ASSERT_EQ(job->nodes.size(), 2u);
  EXPECT_EQ(job->nodes[1].node, "b");
  EXPECT_EQ(job->nodes[1].endpoint, "unix:/run/b.sock");
  EXPECT_EQ(job->nodes[1].ranks, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(job->last_activity_ns, 2);
}

TEST_F(JobRegistryTest, TheNodeListKeepsWhereItCameFrom) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100)).ok());
  EXPECT_EQ(jobs.job("j")->nodes_from, "");
  ASSERT_TRUE(jobs.setNodes("j", twoNodes(), 1, "pmix").ok());
  EXPECT_EQ(jobs.job("j")->nodes_from, "pmix");
  EXPECT_EQ(errorOf(jobs.setNodes("j", twoNodes(), 2, "carrier pigeon")),
            "source 'carrier pigeon' is not \"pmix\", \"mpi\" or \"slurm\" (where the node list came from)");
  EXPECT_EQ(jobs.job("j")->nodes_from, "pmix");  // nothing half-applied
  ASSERT_TRUE(jobs.setNodes("j", twoNodes(), 3, "mpi").ok());
  EXPECT_EQ(jobs.job("j")->nodes_from, "mpi");
}

TEST_F(JobRegistryTest, ProgressIsRecordedForTheRanksOwnProcess) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100)).ok());
  EXPECT_EQ(jobs.recordProgress(progress("x", 0, 1, 1), 100).error().code, ErrorCode::kNotFound);
  Status unregistered = jobs.recordProgress(progress("j", 2, 1, 1), 100);
  EXPECT_EQ(unregistered.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(unregistered.error().message,
            "rank 2 of job 'j' is not registered at this daemon (RegisterRank first)");
  Status other = jobs.recordProgress(progress("j", 0, 1, 1), 101);
  EXPECT_EQ(other.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(other.error().message, "rank 0 of job 'j' was registered by pid 100; you are pid 101");

  ASSERT_TRUE(jobs.recordProgress(progress("j", 0, 7, 5000), 100).ok());
  auto r = jobs.job("j")->ranks[0];
  ASSERT_EQ(r.communicators.size(), 1u);
  EXPECT_EQ(r.communicators[0].communicator, "world");
  EXPECT_EQ(r.communicators[0].collectives_entered, 7u);
  EXPECT_EQ(r.current_operation, "MPI_Allreduce");
  EXPECT_EQ(r.last_report_ns, 5000);
  // Without a pid to check (an admin's call).
  ASSERT_TRUE(jobs.recordProgress(progress("j", 0, 8, 6000), std::nullopt).ok());
  EXPECT_EQ(jobs.job("j")->ranks[0].communicators[0].collectives_entered, 8u);

  ProgressUpdate bad = progress("j", 0, 1, 1);
  bad.communicators.push_back({"", 3});
  EXPECT_EQ(errorOf(jobs.recordProgress(bad, 100)), "communicators[1].communicator is empty");
  JobRegistry small(processes_, {.max_jobs = 10, .max_communicators = 1});
  ASSERT_TRUE(small.registerRank(rank("j", 0, 4, 100)).ok());
  bad = progress("j", 0, 1, 1);
  bad.communicators.push_back({"world.2", 3});
  EXPECT_EQ(errorOf(small.recordProgress(bad, 100)),
            "progress report of rank 0 lists 2 communicators; at most 1 are kept");
}

TEST_F(JobRegistryTest, CheckCallerWantsTheRanksProcess) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 4, 100)).ok());
  ASSERT_TRUE(jobs.registerRank(rank("j", 1, 4, 101)).ok());
  EXPECT_TRUE(jobs.checkCaller("j", 1, 101).ok());
  EXPECT_TRUE(jobs.checkCaller("j", std::nullopt, 100).ok());
  EXPECT_EQ(jobs.checkCaller("j", 1, 100).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(jobs.checkCaller("j", 3, 100).error().code, ErrorCode::kNotFound);
  Status stranger = jobs.checkCaller("j", std::nullopt, 300);
  EXPECT_EQ(stranger.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(stranger.error().message,
            "pid 300 registered no rank of job 'j' at this daemon; only the job's ranks (or an admin) may do this");
  EXPECT_EQ(jobs.checkCaller("nope", std::nullopt, 100).error().code, ErrorCode::kNotFound);
}

TEST_F(JobRegistryTest, ListsAllJobsOrAUsersJobs) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j1", 0, 1, 100, 1000)).ok());
  ASSERT_TRUE(jobs.registerRank(rank("j2", 0, 1, 101, 2000)).ok());
  EXPECT_EQ(jobs.list().size(), 2u);
  auto mine = jobs.list(2000);
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].job_id, "j2");
  EXPECT_TRUE(jobs.list(3000).empty());
}

TEST_F(JobRegistryTest, WhenFullTheOldestEndedJobGoesFirst) {
  JobRegistry jobs(processes_, {.max_jobs = 2});
  ASSERT_TRUE(jobs.registerRank(rank("old", 0, 1, 100, 1000, "a", 10)).ok());
  ASSERT_TRUE(jobs.registerRank(rank("ended", 0, 1, 101, 1000, "a", 20)).ok());
  processes_.remove(101);
  ASSERT_TRUE(jobs.registerRank(rank("new", 0, 1, 102, 1000, "a", 30)).ok());
  EXPECT_TRUE(jobs.job("old"));
  EXPECT_FALSE(jobs.job("ended"));
  EXPECT_TRUE(jobs.job("new"));
  // None ended: the least recently active goes.
  ASSERT_TRUE(jobs.recordProgress(progress("old", 0, 1, 40), 100).ok());
  ASSERT_TRUE(jobs.registerRank(rank("newer", 0, 1, 103, 1000, "a", 50)).ok());
  EXPECT_TRUE(jobs.job("old"));
  EXPECT_FALSE(jobs.job("new"));
  EXPECT_TRUE(jobs.job("newer"));
  EXPECT_EQ(jobs.size(), 2u);
}

TEST_F(JobRegistryTest, ARanksEndingSignalIsItsLastReportsAndACancellationIsMarkedOnce) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 2, 100)).ok());
  ProgressUpdate ending = progress("j", 0, 1, 2000);
  ending.ending_signal = 15;
  ASSERT_TRUE(jobs.recordProgress(ending, 100).ok());
  EXPECT_EQ(jobs.job("j")->ranks[0].ending_signal, 15);
  // Its program's handler returned and it runs on: the next report says 0.
  ASSERT_TRUE(jobs.recordProgress(progress("j", 0, 2, 3000), 100).ok());
  EXPECT_EQ(jobs.job("j")->ranks[0].ending_signal, 0);

  EXPECT_EQ(jobs.job("j")->cancelled_by_signal, 0);
  EXPECT_TRUE(jobs.markCancelled("j", 2, 4000));
  EXPECT_FALSE(jobs.markCancelled("j", 15, 5000));  // once: the first signal stays
  EXPECT_EQ(jobs.job("j")->cancelled_by_signal, 2);
  EXPECT_EQ(jobs.list()[0].cancelled_by_signal, 2);
  EXPECT_EQ(jobs.job("j")->end, JobEnd::kCancelled);
  EXPECT_EQ(jobs.job("j")->end_ns, 4000);
  EXPECT_NE(jobs.job("j")->end_detail.find("SIGINT"), std::string::npos) << jobs.job("j")->end_detail;
  EXPECT_FALSE(jobs.markCancelled("nope", 2, 4000));
}

TEST_F(JobRegistryTest, TheFirstToKnowAJobsEndTellsIt) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("j", 0, 1, 100)).ok());
  EXPECT_EQ(jobs.job("j")->end, JobEnd::kRunning);
  EXPECT_FALSE(jobs.markEnded("j", JobEnd::kRunning, "not an end", 10));
  EXPECT_TRUE(jobs.markEnded("j", JobEnd::kAborted, "rank 0 aborted", 20));
  EXPECT_FALSE(jobs.markEnded("j", JobEnd::kCompleted, "late", 30));
  EXPECT_EQ(jobs.job("j")->end, JobEnd::kAborted);
  EXPECT_EQ(jobs.job("j")->end_detail, "rank 0 aborted");
  EXPECT_EQ(jobs.job("j")->end_ns, 20);
  // A cancellation seen later keeps the signal but not the end.
  EXPECT_TRUE(jobs.markCancelled("j", 15, 40));
  EXPECT_EQ(jobs.job("j")->end, JobEnd::kAborted);
  EXPECT_FALSE(jobs.markEnded("nope", JobEnd::kFailed, "", 10));
  EXPECT_EQ(jobEndName(JobEnd::kCancelled), "cancelled");
}

TEST_F(JobRegistryTest, AProcessIsFoundInTheJobWhoseRankItIs) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("a", 0, 2, 100)).ok());
  ASSERT_TRUE(jobs.registerRank(rank("b", 1, 2, 200)).ok());
  EXPECT_EQ(jobs.jobOfProcess(100), "a");
  EXPECT_EQ(jobs.jobOfProcess(200), "b");
  EXPECT_EQ(jobs.jobOfProcess(300), std::nullopt);
}

TEST_F(JobRegistryTest, EnergyAddsUpAndTheFirstProgramNamesTheJob) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.registerRank(rank("a", 0, 2, 100)).ok());
  jobs.addEnergy("a", 1.25, "lulesh");
  jobs.addEnergy("a", 2.5, "other");
  jobs.addEnergy("a", -1.0, "");
  jobs.addEnergy("nope", 9.0, "x");
  EXPECT_EQ(jobs.job("a")->energy_j, 3.75);
  EXPECT_EQ(jobs.job("a")->program, "lulesh");
  // Kept once it ended.
  EXPECT_TRUE(jobs.markEnded("a", JobEnd::kCompleted, "exit 0", 50));
  jobs.addEnergy("a", 0.25, "lulesh");
  EXPECT_EQ(jobs.job("a")->energy_j, 4.0);
}

}  // namespace
}  // namespace nk
