// JobRegistry's side of a scheduler's jobs (the Slurm plugin): beginJob,
// attachProcess, jobOfProcess through parents, and jobs without ranks.
#include <gtest/gtest.h>

#include "fake_process_state_reader.h"
#include "faults/job_registry.h"

namespace nk {
namespace {

using test::FakeProcessStateReader;

class JobRegistrySchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (pid_t pid : {100, 101, 102, 200, 300}) processes_.set(pid, ProcessState::kRunning);
  }
  static JobBeginning beginning(std::string id, uid_t uid = 1000) {
    JobBeginning b;
    b.job_id = std::move(id);
    b.uid = uid;
    b.nodes = {{"n1", "n1:7070", {}}, {"n2", "n2:7070", {}}};
    b.settings.power_budget_mw = 40000;
    b.settings.policy = "thermal-aware";
    b.settings.tasks = "lossless";
    b.program = "stream";
    b.now_ns = 10;
    return b;
  }
  static RankRegistration rank(std::string job, uint32_t r, uint32_t size, pid_t pid, uid_t uid = 1000) {
    RankRegistration reg;
    reg.job_id = std::move(job);
    reg.rank = r;
    reg.size = size;
    reg.node = "n1";
    reg.pid = pid;
    reg.uid = uid;
    reg.now_ns = 20;
    return reg;
  }
  static std::string errorOf(const Status& status) { return status.ok() ? "ok" : status.error().message; }

  FakeProcessStateReader processes_;
};

TEST_F(JobRegistrySchedulerTest, BeginKeepsTheJobsTermsNodesAndSource) {
  JobRegistry jobs(processes_);
  ASSERT_EQ(errorOf(jobs.beginJob(beginning("77"))), "ok");
  auto job = jobs.job("77");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "slurm");
  EXPECT_EQ(job->uid, 1000u);
  EXPECT_EQ(job->settings.power_budget_mw, 40000u);
  EXPECT_EQ(job->settings.policy, "thermal-aware");
  EXPECT_EQ(job->settings.tasks, "lossless");
  EXPECT_EQ(job->program, "stream");
  EXPECT_EQ(job->nodes_from, "slurm");
  ASSERT_EQ(job->nodes.size(), 2u);
  EXPECT_EQ(job->nodes[1].endpoint, "n2:7070");
  EXPECT_EQ(job->end, JobEnd::kRunning);
  EXPECT_EQ(job->created_ns, 10);
}

TEST_F(JobRegistrySchedulerTest, BadBeginningsNameTheField) {
  JobRegistry jobs(processes_);
  auto with = [](auto change) {
    JobBeginning b = beginning("77");
    change(b);
    return b;
  };
  EXPECT_EQ(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.job_id.clear(); }))), "job_id is empty");
  EXPECT_NE(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.job_id = "7 7"; }))).find("spaces"), std::string::npos);
  EXPECT_NE(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.job_id = std::string(300, '7'); }))).find("longer"),
            std::string::npos);
  EXPECT_NE(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.settings.tasks = "all"; }))).find("lossless"),
            std::string::npos);
  EXPECT_NE(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.settings.policy = "a b"; }))).find("policy"),
            std::string::npos);
  EXPECT_NE(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.nodes.push_back({"n1", "", {}}); }))).find("twice"),
            std::string::npos);
  EXPECT_NE(errorOf(jobs.beginJob(with([](JobBeginning& b) { b.nodes[0].node.clear(); }))).find("nodes[0]"),
            std::string::npos);
  EXPECT_EQ(jobs.size(), 0u);  // nothing half-applied
}

TEST_F(JobRegistrySchedulerTest, AnotherStepReplacesTheTermsButNotTheOwner) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  JobBeginning again = beginning("77");
  again.settings.power_budget_mw = 20000;
  ASSERT_EQ(errorOf(jobs.beginJob(again)), "ok");
  EXPECT_EQ(jobs.job("77")->settings.power_budget_mw, 20000u);
  EXPECT_NE(errorOf(jobs.beginJob(beginning("77", 2000))).find("belongs to uid 1000"), std::string::npos);
}

TEST_F(JobRegistrySchedulerTest, AJobWithoutRanksIsNotErasedWhenItsFirstRankComes) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  ASSERT_TRUE(jobs.attachProcess("77", 100, 11).ok());
  ASSERT_EQ(errorOf(jobs.registerRank(rank("77", 0, 2, 101))), "ok");
  auto job = jobs.job("77");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "slurm");  // the same job: its terms are still there
  EXPECT_EQ(job->settings.power_budget_mw, 40000u);
  EXPECT_EQ(job->size, 2u);
  EXPECT_EQ(job->ranks.size(), 1u);
  // A rank of another user may not join it.
  EXPECT_NE(errorOf(jobs.registerRank(rank("77", 1, 2, 102, 2000))).find("uid"), std::string::npos);
}

TEST_F(JobRegistrySchedulerTest, AnEndedJobsIdBeginsANewJob) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  ASSERT_TRUE(jobs.markEnded("77", JobEnd::kCancelled, "cancelled by scancel (SIGTERM)", 50));
  JobBeginning next = beginning("77", 2000);
  ASSERT_EQ(errorOf(jobs.beginJob(next)), "ok");
  EXPECT_EQ(jobs.job("77")->uid, 2000u);
  EXPECT_EQ(jobs.job("77")->end, JobEnd::kRunning);
}

TEST_F(JobRegistrySchedulerTest, AttachedProcessesAndTheirDescendantsAreTheJobs) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  ASSERT_TRUE(jobs.attachProcess("77", 100, 11).ok());
  processes_.set(150, ProcessState::kRunning);
  processes_.setParent(150, 100);  // the task's child (a shell's program)
  processes_.set(160, ProcessState::kRunning);
  processes_.setParent(160, 150);
  processes_.setParent(100, 1);
  EXPECT_EQ(jobs.jobOfProcess(100), "77");
  EXPECT_EQ(jobs.jobOfProcess(160), "77");
  EXPECT_EQ(jobs.jobOfProcess(200), std::nullopt);
  // The task's pid given to another process: not the job's any more.
  processes_.set(100, ProcessState::kRunning, 5555);
  processes_.setParent(100, 1);
  EXPECT_EQ(jobs.jobOfProcess(160), std::nullopt);
}

TEST_F(JobRegistrySchedulerTest, TheStepsProcessMakesEveryTaskTheJobs) {
  JobRegistry jobs(processes_);
  processes_.set(90, ProcessState::kRunning);  // slurmstepd
  for (pid_t task : {100, 101}) processes_.setParent(task, 90);
  processes_.set(150, ProcessState::kRunning);
  processes_.setParent(150, 101);  // a task's own child
  processes_.setParent(90, 1);
  processes_.setParent(200, 1);
  const uint64_t before = jobs.membershipGeneration();
  JobBeginning b = beginning("77");
  b.step_pid = 90;
  ASSERT_EQ(errorOf(jobs.beginJob(b)), "ok");
  EXPECT_NE(jobs.membershipGeneration(), before);
  EXPECT_EQ(jobs.jobOfProcess(100), "77");
  EXPECT_EQ(jobs.jobOfProcess(101), "77");
  EXPECT_EQ(jobs.jobOfProcess(150), "77");
  EXPECT_EQ(jobs.jobOfProcess(200), std::nullopt);
  // The step gone: the job's processes are gone, so the id may begin anew.
  processes_.remove(90);
  ASSERT_TRUE(jobs.beginJob(beginning("77", 2000)).ok());
  EXPECT_EQ(jobs.job("77")->uid, 2000u);
}

TEST_F(JobRegistrySchedulerTest, ABadStepPidChangesNothing) {
  JobRegistry jobs(processes_);
  JobBeginning b = beginning("77");
  b.step_pid = 999;  // no such process
  EXPECT_NE(errorOf(jobs.beginJob(b)).find("step_pid 999 is not a running process"), std::string::npos);
  b.step_pid = 1;
  EXPECT_NE(errorOf(jobs.beginJob(b)).find("not a step's process"), std::string::npos);
  EXPECT_EQ(jobs.size(), 0u);
  // A job here already keeps its terms when the step cannot be attached.
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  JobBeginning again = beginning("77");
  again.settings.power_budget_mw = 20000;
  again.step_pid = 999;
  EXPECT_FALSE(jobs.beginJob(again).ok());
  EXPECT_EQ(jobs.job("77")->settings.power_budget_mw, 40000u);
}

TEST_F(JobRegistrySchedulerTest, RanksWithoutEndpointsGetTheSchedulersPeerEndpoints) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  ASSERT_TRUE(jobs.registerRank(rank("77", 0, 2, 101)).ok());
  ASSERT_EQ(errorOf(jobs.setNodes("77", {{"n1", "", {0}}, {"n2", "", {1}}}, 30)), "ok");
  auto job = jobs.job("77");
  ASSERT_EQ(job->nodes.size(), 2u);
  EXPECT_EQ(job->nodes[0].endpoint, "n1:7070");
  EXPECT_EQ(job->nodes[1].endpoint, "n2:7070");
  EXPECT_EQ(job->nodes[1].ranks, std::vector<uint32_t>{1});
  // A node the scheduler did not list still needs one.
  EXPECT_NE(errorOf(jobs.setNodes("77", {{"n1", "", {0}}, {"n3", "", {1}}}, 30)).find("no endpoint"), std::string::npos);
}

TEST_F(JobRegistrySchedulerTest, AParentLoopEndsTheWalk) {
  JobRegistry jobs(processes_);
  processes_.setParent(101, 102);
  processes_.setParent(102, 101);
  EXPECT_EQ(jobs.jobOfProcess(101), std::nullopt);
}

TEST_F(JobRegistrySchedulerTest, AttachChecksTheJobAndThePid) {
  JobRegistry jobs(processes_);
  EXPECT_NE(errorOf(jobs.attachProcess("77", 100, 11)).find("no job"), std::string::npos);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  EXPECT_NE(errorOf(jobs.attachProcess("77", 999, 11)).find("not a running process"), std::string::npos);
  EXPECT_NE(errorOf(jobs.attachProcess("77", 1, 11)).find("not a task"), std::string::npos);
  EXPECT_EQ(errorOf(jobs.attachProcess("77", 100, 11)), "ok");
  EXPECT_EQ(errorOf(jobs.attachProcess("77", 100, 12)), "ok");  // again: nothing new
}

TEST_F(JobRegistrySchedulerTest, AJobWhoseTasksAreAllGoneMayBeReplaced) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  ASSERT_TRUE(jobs.attachProcess("77", 100, 11).ok());
  processes_.remove(100);
  ASSERT_TRUE(jobs.beginJob(beginning("77", 2000)).ok());
  EXPECT_EQ(jobs.job("77")->uid, 2000u);
}

TEST_F(JobRegistrySchedulerTest, TheNextStepOfAnAllocationGoesOnWithItsJob) {
  JobRegistry jobs(processes_);
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  ASSERT_TRUE(jobs.attachProcess("77", 100, 11).ok());
  jobs.addEnergy("77", 12.5, "stream");
  processes_.remove(100);  // the first step is over, the allocation is not
  JobBeginning next = beginning("77");
  next.now_ns = 40;
  ASSERT_TRUE(jobs.beginJob(next).ok());
  auto job = jobs.job("77");
  ASSERT_TRUE(job);
  EXPECT_DOUBLE_EQ(job->energy_j, 12.5);
  EXPECT_EQ(job->created_ns, 10);
  // Its end told, the same id begins a new job.
  ASSERT_TRUE(jobs.markEnded("77", JobEnd::kCompleted, "exit 0", 50));
  ASSERT_TRUE(jobs.beginJob(next).ok());
  EXPECT_DOUBLE_EQ(jobs.job("77")->energy_j, 0.0);
}

TEST_F(JobRegistrySchedulerTest, MembershipChangesWhenProcessesMayHaveJoinedAJob) {
  JobRegistry jobs(processes_);
  uint64_t seen = jobs.membershipGeneration();
  auto changed = [&] {
    const uint64_t now = jobs.membershipGeneration();
    const bool differs = now != seen;
    seen = now;
    return differs;
  };
  ASSERT_TRUE(jobs.beginJob(beginning("77")).ok());
  EXPECT_TRUE(changed());
  ASSERT_TRUE(jobs.attachProcess("77", 100, 11).ok());
  EXPECT_TRUE(changed());
  ASSERT_TRUE(jobs.registerRank(rank("78", 0, 1, 200)).ok());
  EXPECT_TRUE(changed());
  // What changes no one's job leaves it alone.
  jobs.addEnergy("77", 5.0, "stream");
  EXPECT_TRUE(jobs.markEnded("78", JobEnd::kCompleted, "exit 0", 30));
  EXPECT_FALSE(changed());
  // Refused calls change nothing either.
  EXPECT_FALSE(jobs.attachProcess("nope", 101, 12).ok());
  EXPECT_FALSE(jobs.registerRank(rank("77", 0, 1, 300, 2000)).ok());
  EXPECT_FALSE(changed());
}

}  // namespace
}  // namespace nk
