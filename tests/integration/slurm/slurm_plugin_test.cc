// The Slurm SPANK plugin end to end: real munged, slurmctld and slurmd
// (one node, on 127.0.0.1) with the plugin in their plugstack.conf, a real
// daemon on an emulated node, and an OpenMP program under srun. Needs root
// (slurmd); skipped otherwise.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "slurm_cluster.h"
#include "testlib/background_program.h"
#include "testlib/daemon_process.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Json = nlohmann::json;

class SlurmPluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    dir_ = std::make_unique<TempDir>("slurm", TempDir::Access::kShared);
    daemon_ = std::make_unique<DaemonProcess>();
    if (!daemon_->start(dir_->path() / "daemon")) {
      setup_error_ = "daemon: " + daemon_->lastError();
      return;
    }
    cluster_ = std::make_unique<SlurmCluster>();
    const std::string plugin = "required " + envOr("NK_SPANK_PLUGIN") + " cli=" + cliPath() +
                               " socket=" + daemon_->socket().string() + " tool=" + envOr("NK_CLIENT_LIB") +
                               " timeout=2";
    if (!cluster_->start(dir_->path() / "slurm", plugin)) setup_error_ = "slurm: " + cluster_->lastError();
  }
  static void TearDownTestSuite() {
    cluster_.reset();  // its jobs' processes first, then the daemon
    daemon_.reset();
    dir_.reset();
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "slurmd needs root";
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  static std::string program() { return envOr("NK_TASKS_PROGRAM"); }

  static Json cliJson(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {cliPath(), "--socket", daemon_->socket().string(), "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = runProgram(argv, std::nullopt, 30s);
    if (result.exit_code != 0) return Json();
    return Json::parse(result.out, nullptr, false);
  }

  // The daemon's record of the job (ListJobs as root), if it has one.
  static std::optional<v1::Job> daemonJob(const std::string& job_id) {
    auto stub =
        v1::FaultsService::NewStub(grpc::CreateChannel("unix:" + daemon_->socket().string(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::ListJobsRequest request;
    request.set_job_id(job_id);
    v1::JobList list;
    if (!stub->ListJobs(&context, request, &list).ok()) return std::nullopt;
    for (const v1::Job& job : list.jobs())
      if (job.job_id() == job_id) return job;
    return std::nullopt;
  }

  // The daemon's record of the job once its end is recorded (2 minutes at
  // most), or none.
  static std::optional<v1::Job> endedDaemonJob(const std::string& job_id) {
    std::optional<v1::Job> job;
    if (!waitFor(
            [&] {
              job = daemonJob(job_id);
              return job && job->end() != v1::JOB_END_RUNNING;
            },
            120s))
      return std::nullopt;
    return job;
  }

  std::string failureContext() const {
    return "\n--- daemon log\n" + [] {
      std::ifstream in(daemon_->stderrPath());
      std::stringstream text;
      text << in.rdbuf();
      std::string log = text.str();
      return log.size() > 3000 ? log.substr(log.size() - 3000) : log;
    }() + "\n" + cluster_->logs();
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<DaemonProcess> daemon_;
  static inline std::unique_ptr<SlurmCluster> cluster_;
  static inline std::string setup_error_;
};

TEST_F(SlurmPluginTest, ABudgetReachesTheAppAndTheJobsJoulesAreWritten) {
  const fs::path stop = dir_->path() / "stop-budget";
  BackgroundProgram srun;
  ASSERT_TRUE(srun.start(cluster_->command({"srun", "-N1", "-n1", "-J", "nk-budget", "--nk-budget=40W", program(),
                                            "until", stop.string(), "16"}),
                         dir_->path() / "budget.out", dir_->path() / "budget.err"));
  Json app;
  const bool budgeted = waitFor(
      [&] {
        Json apps = cliJson({"apps"});
        if (!apps.is_object()) return false;
        for (const Json& a : apps["apps"])
          if (a.value("budget_mw", 0) == 40000) {
            app = a;
            return true;
          }
        return false;
      },
      120s);
  const std::string job_id = cluster_->jobIdByName("nk-budget");
  // The program runs on until the daemon has charged its job some energy.
  const bool charged = budgeted && !job_id.empty() && waitFor(
      [&] {
        auto job = daemonJob(job_id);
        return job && job->energy_j() > 0;
      },
      120s);
  std::ofstream(stop) << "stop\n";
  ASSERT_TRUE(budgeted) << "no app with a 40 W budget; srun said: " << srun.err() << failureContext();
  ASSERT_TRUE(charged) << "job " << job_id << " was charged no energy" << failureContext();
  EXPECT_EQ(srun.wait(120s), 0) << srun.err();
  ASSERT_FALSE(job_id.empty());

  // The plugin asks the daemon for the job's energy at its end and writes it.
  std::string comment;
  ASSERT_TRUE(waitFor(
      [&] {
        comment = cluster_->jobField(job_id, "AdminComment");
        return comment.find("nodekeeper_energy_j:") != std::string::npos;
      },
      60s))
      << "AdminComment: '" << comment << "'" << failureContext();
  auto job = daemonJob(job_id);
  ASSERT_TRUE(job) << failureContext();
  EXPECT_EQ(job->source(), "slurm");
  EXPECT_EQ(job->end(), v1::JOB_END_COMPLETED) << job->end_detail();
  EXPECT_EQ(job->settings().power_budget_mw(), 40000u);
  // One item per node: nodekeeper_energy_j:NODE=JOULES.
  const double written = std::stod(comment.substr(comment.find('=', comment.find("nodekeeper_energy_j:")) + 1));
  EXPECT_NEAR(written, job->energy_j(), 0.051);
  EXPECT_GT(written, 0.0);
}

TEST_F(SlurmPluginTest, LosslessTasksGiveATaskSession) {
  ProcessResult srun = cluster_->run({"srun", "-N1", "-n1", "-J", "nk-tasks", "--nk-tasks=lossless", program(), "fib", "12"});
  ASSERT_EQ(srun.exit_code, 0) << srun.err << failureContext();
  EXPECT_NE(srun.out.find("tasks="), std::string::npos) << srun.out;
  Json sessions;
  ASSERT_TRUE(waitFor(
      [&] {
        sessions = cliJson({"tasks"});
        return sessions.is_object() && !sessions["sessions"].empty();
      },
      60s))
      << sessions.dump() << failureContext();
  EXPECT_GT(sessions["sessions"][0].value("tasks", 0), 0) << sessions.dump();
}

TEST_F(SlurmPluginTest, ScancelIsACancellation) {
  const fs::path never = dir_->path() / "never";
  BackgroundProgram srun;
  ASSERT_TRUE(srun.start(cluster_->command({"srun", "-N1", "-n1", "-J", "nk-cancel", program(), "until", never.string(), "16"}),
                         dir_->path() / "cancel.out", dir_->path() / "cancel.err"));
  std::string job_id;
  ASSERT_TRUE(waitFor(
      [&] {
        job_id = cluster_->jobIdByName("nk-cancel");
        return !job_id.empty() && daemonJob(job_id).has_value();
      },
      120s))
      << srun.err() << failureContext();
  ProcessResult scancel = cluster_->run({"scancel", job_id});
  ASSERT_EQ(scancel.exit_code, 0) << scancel.err;
  std::optional<v1::Job> job = endedDaemonJob(job_id);
  ASSERT_TRUE(job) << failureContext();
  EXPECT_EQ(job->end(), v1::JOB_END_CANCELLED) << job->end_detail();
  EXPECT_NE(job->end_detail().find("scancel"), std::string::npos) << job->end_detail();
  EXPECT_NE(srun.wait(60s), 0);
}

TEST_F(SlurmPluginTest, DebugHoldsTheProgramUntilAFrontendContinuesIt) {
  BackgroundProgram srun;
  ASSERT_TRUE(srun.start(cluster_->command({"srun", "-N1", "-n1", "-J", "nk-debug", "--nk-debug", program(), "fib", "12"}),
                         dir_->path() / "debug.out", dir_->path() / "debug.err"));
  // Its session: the live one (an earlier test's has ended).
  uint64_t session = 0;
  ASSERT_TRUE(waitFor(
      [&] {
        Json sessions = cliJson({"tasks"});
        if (!sessions.is_object()) return false;
        for (const Json& s : sessions["sessions"])
          if (s.value("live", false)) session = s.value("session_id", uint64_t{0});
        return session != 0;
      },
      120s))
      << srun.err() << failureContext();
  // Held: a second later nothing has run, and the program has not ended.
  const fs::path lines = dir_->path() / "debug.batch";
  std::ofstream(lines) << "wait seconds 1\nstatus\ncontinue\n";
  ProcessResult frontend = runProgram(
      {cliPath(), "--socket", daemon_->socket().string(), "debug", std::to_string(session), "--batch", lines.string()},
      std::nullopt, 60s);
  ASSERT_EQ(frontend.exit_code, 0) << frontend.err;
  Json status;
  std::istringstream out(frontend.out);
  for (std::string line; std::getline(out, line);) {
    Json j = Json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("command", "") == "status") status = j["status"];
  }
  ASSERT_TRUE(status.is_object()) << frontend.out;
  EXPECT_TRUE(status.value("held", false)) << status.dump();
  EXPECT_EQ(status.value("finished", -1), 0) << status.dump();
  // Continued, it runs to its end.
  EXPECT_EQ(srun.wait(120s), 0) << srun.err() << failureContext();
  std::ifstream result(dir_->path() / "debug.out");
  std::stringstream text;
  text << result.rdbuf();
  EXPECT_NE(text.str().find("fib="), std::string::npos) << text.str();
}

// An salloc runs steps one after another, with no process of the job on the
// node in between, and no step of it ends the job: the job goes on across
// its steps (both apps' joules are its), and slurmd's epilog tells its end.
TEST_F(SlurmPluginTest, AnAllocationsStepsAreOneJobEndedByTheEpilog) {
  const fs::path first_stop = dir_->path() / "salloc-stop-1";
  const fs::path second_stop = dir_->path() / "salloc-stop-2";
  const std::string step = "srun -N1 -n1 --nk-budget=40W " + program() + " until ";
  BackgroundProgram salloc;
  ASSERT_TRUE(salloc.start(cluster_->command({"salloc", "-N1", "-J", "nk-salloc", "sh", "-c",
                                              step + first_stop.string() + " 16 && " + step + second_stop.string() +
                                                  " 16 && exit 3"}),
                           dir_->path() / "salloc.out", dir_->path() / "salloc.err"));
  std::string job_id;
  ASSERT_TRUE(waitFor(
      [&] {
        job_id = cluster_->jobIdByName("nk-salloc");
        return !job_id.empty();
      },
      120s))
      << salloc.err() << failureContext();
  // Each step's app, once the daemon has charged it some energy.
  auto charged_app = [&](int64_t other_than) -> Json {
    Json found;
    waitFor(
        [&] {
          Json apps = cliJson({"apps"});
          if (!apps.is_object()) return false;
          for (const Json& a : apps["apps"])
            if (a.value("job_id", "") == job_id && a.value("pid", int64_t{0}) != other_than &&
                a.value("energy_j", 0.0) > 0) {
              found = a;
              return true;
            }
          return false;
        },
        120s);
    return found;
  };
  const Json first = charged_app(0);
  std::ofstream(first_stop) << "stop\n";
  ASSERT_TRUE(first.is_object()) << "the first step's app was not charged to job " << job_id << failureContext();
  const Json second = charged_app(first.value("pid", int64_t{0}));
  std::ofstream(second_stop) << "stop\n";
  ASSERT_TRUE(second.is_object()) << "the second step's app was not charged to job " << job_id << failureContext();
  EXPECT_NE(salloc.wait(120s), 0);  // the allocation's command: exit 3

  std::optional<v1::Job> job = endedDaemonJob(job_id);
  ASSERT_TRUE(job) << "the job's end was not recorded" << failureContext();
  EXPECT_EQ(job->end(), v1::JOB_END_FAILED) << job->end_detail();
  EXPECT_EQ(job->end_detail(), "exit 3");
  // Its apps' final joules, from the ended apps' list.
  double first_j = 0, second_j = 0;
  const Json ended = cliJson({"apps", "--ended"});
  for (const Json& a : ended.value("apps", Json::array())) {
    if (a.value("pid", int64_t{0}) == first.value("pid", int64_t{-1})) first_j = a.value("energy_j", 0.0);
    if (a.value("pid", int64_t{0}) == second.value("pid", int64_t{-1})) second_j = a.value("energy_j", 0.0);
  }
  ASSERT_GT(first_j, 0.0) << ended.dump();
  ASSERT_GT(second_j, 0.0) << ended.dump();
  // Both steps' energy: a job begun anew at the second step would hold the
  // second app's alone. (An app's first energy steps may go uncharged to
  // the job until the daemon knows it is the job's: not the full sum.)
  EXPECT_GT(job->energy_j(), second_j + first_j / 2) << "job " << job->energy_j() << " J, apps " << first_j << " and "
                                                      << second_j << " J";
  EXPECT_LE(job->energy_j(), (first_j + second_j) * (1 + 1e-9));
  // No AdminComment: slurmctld takes none once the allocation is over, and
  // no step of it knew it was the last (docs/slurm.md).
}

TEST_F(SlurmPluginTest, ABadBudgetStopsSrunWithOneClearLine) {
  ProcessResult srun = cluster_->run({"srun", "-N1", "-n1", "--nk-budget=abc", "/bin/true"});
  EXPECT_NE(srun.exit_code, 0);
  EXPECT_NE(srun.err.find("--nk-budget=abc is not a power"), std::string::npos) << srun.err;
}

}  // namespace
}  // namespace nk::test
