// Energy per app end to end: a real nodekeeperd --emulate and two real,
// unmodified OpenMP programs (loading libnodekeeper as their OMPT tool) busy
// on the node at the same time. The daemon splits each package's RAPL energy
// over the apps by their CPU time on its cores; what other processes used
// stays unattributed. On the emulated node the packages' energy comes from
// the managed apps' load alone (host load is switched off while the energy
// manager drives it), so with two busy apps and nothing else managed, the
// apps' joules must add up to the packages' energy over the same interval:
// the test allows 2%, for intervals in which a package's cores ran no app
// thread at all. Under NK_TEST_HOST_LOAD the apps' threads wait for the
// host's CPUs, but a thread waiting for a host CPU is still the emulated
// core's load: the check is about attribution, not about how fast they ran.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "nodekeeper/v1/apps.grpc.pb.h"
#include "nodekeeper/v1/faults.grpc.pb.h"
#include "nodekeeper/v1/node.grpc.pb.h"
#include "testlib/background_program.h"
#include "testlib/daemon_fixture.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr int kCores = 12;  // the default profile: 2 x 6 cores
constexpr uint64_t kBudgetMw = 150000;

class EnergyAttributionTest : public DaemonFixture {
 protected:
  EnergyAttributionTest() : DaemonFixture("ea", {"--dct-interval-ms", "250"}) {}
  void SetUp() override {
    DaemonFixture::SetUp();
    apps_ = v1::AppsService::NewStub(channel_);
    node_ = v1::NodeService::NewStub(channel_);
    faults_ = v1::FaultsService::NewStub(channel_);
  }

  std::vector<std::string> probeCommand(const std::string& stop_file) {
    return {"/usr/bin/env",
            "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
            "NODEKEEPER_POWER_BUDGET_MW=" + std::to_string(kBudgetMw),
            "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"),
            "OMP_NUM_THREADS=" + std::to_string(kCores),
            envOr("NK_PROBE_CLANG"),
            "100000000",
            "200",
            stop_file};
  }

  std::optional<v1::AppList> listApps(bool ended) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::ListAppsRequest request;
    request.set_ended(ended);
    v1::AppList list;
    if (!apps_->ListApps(&context, request, &list).ok()) return std::nullopt;
    return list;
  }
  double telemetryEnergyJ() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::TelemetrySnapshot snapshot;
    if (!node_->GetTelemetry(&context, v1::GetTelemetryRequest(), &snapshot).ok()) return NAN;
    double sum = 0;
    for (const auto& package : snapshot.packages()) sum += package.energy_j();
    return sum;
  }
  static double energyOf(const v1::AppList& list, pid_t pid) {
    for (const auto& app : list.apps())
      if (app.pid() == pid) return app.energy_j();
    return NAN;
  }
  template <typename Predicate>
  bool eventually(Predicate predicate, std::chrono::milliseconds timeout) {
    for (auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
      if (predicate()) return true;
      std::this_thread::sleep_for(100ms);
    }
    return predicate();
  }

  std::unique_ptr<v1::AppsService::Stub> apps_;
  std::unique_ptr<v1::NodeService::Stub> node_;
  std::unique_ptr<v1::FaultsService::Stub> faults_;
};

TEST_F(EnergyAttributionTest, TwoProgramsJoulesAddUpToThePackagesEnergyAndOutliveThemAndTheirJob) {
  const std::string stop = (dir_ / "stop").string();
  BackgroundProgram first, second;
  ASSERT_TRUE(first.start(probeCommand(stop), dir_ / "first.out", dir_ / "first.err"));
  ASSERT_TRUE(second.start(probeCommand(stop), dir_ / "second.out", dir_ / "second.err"));
  const pid_t first_pid = first.pid(), second_pid = second.pid();  // pid() is -1 once waited for

  // Both registered and both charged: the accounting runs.
  ASSERT_TRUE(eventually(
      [&] {
        auto list = listApps(false);
        return list && energyOf(*list, first_pid) > 0 && energyOf(*list, second_pid) > 0;
      },
      60s))
      << first.err() << second.err();

  // The first program is rank 0 of a job (the test is root: an admin may
  // register another process); its joules from here on are the job's too.
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::RegisterRankRequest request;
    request.set_job_id("energy-job");
    request.set_rank(0);
    request.set_size(1);
    request.set_node("n1");
    request.set_pid(first_pid);
    v1::RegisterRankResponse reply;
    grpc::Status status = faults_->RegisterRank(&context, request, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  auto start = listApps(false);
  ASSERT_TRUE(start);
  const double telemetry_after_start = telemetryEnergyJ();
  // A window of many energy manager steps (some 5 s of the node's power),
  // however slowly they come.
  ASSERT_TRUE(eventually(
      [&] {
        auto list = listApps(false);
        return list && list->accounted_energy_j() > start->accounted_energy_j() + 500.0;
      },
      120s));
  const double telemetry_before_end = telemetryEnergyJ();
  auto end = listApps(false);
  ASSERT_TRUE(end);

  const double first_j = energyOf(*end, first_pid) - energyOf(*start, first_pid);
  const double second_j = energyOf(*end, second_pid) - energyOf(*start, second_pid);
  const double packages_j = end->accounted_energy_j() - start->accounted_energy_j();
  std::printf("window: first %.1f J, second %.1f J, packages %.1f J, unattributed %.1f J\n", first_j, second_j,
              packages_j, end->unattributed_energy_j() - start->unattributed_energy_j());
  EXPECT_GT(first_j, 0);
  EXPECT_GT(second_j, 0);
  // The accounting's intervals are the packages' counters' own: the energy
  // it split is the counters' advance between the samples it accounted.
  EXPECT_NEAR(packages_j, end->packages_energy_j() - start->packages_energy_j(), 1e-3 * packages_j);
  // ...which the node's telemetry had reached by then.
  EXPECT_LE(start->packages_energy_j(), telemetry_after_start + 1e-6);
  EXPECT_LE(end->packages_energy_j(), telemetryEnergyJ() + 1e-6);
  EXPECT_GE(end->packages_energy_j(), start->packages_energy_j());
  EXPECT_LE(start->packages_energy_j(), telemetry_before_end + 1e-6);
  // The rule: with no other managed load, the apps get it all.
  EXPECT_NEAR(first_j + second_j, packages_j, 0.02 * packages_j)
      << "first " << first_j << " J, second " << second_j << " J, packages " << packages_j << " J, unattributed "
      << end->unattributed_energy_j() - start->unattributed_energy_j() << " J";

  std::ofstream(stop) << "stop\n";
  EXPECT_EQ(first.wait(60s), 0) << first.err();
  EXPECT_EQ(second.wait(60s), 0) << second.err();

  // Ended, their joules are kept: at least what they had at the window's end.
  std::optional<v1::AppList> ended;
  ASSERT_TRUE(eventually(
      [&] {
        ended = listApps(true);
        return ended && !std::isnan(energyOf(*ended, first_pid)) && !std::isnan(energyOf(*ended, second_pid));
      },
      30s))
      << (ended ? ended->DebugString() : "no answer") << " running: " << listApps(false)->DebugString();
  EXPECT_GE(energyOf(*ended, first_pid), energyOf(*end, first_pid));
  EXPECT_GE(energyOf(*ended, second_pid), energyOf(*end, second_pid));
  for (const auto& app : ended->apps()) {
    EXPECT_FALSE(app.end_detail().empty());
    EXPECT_GE(app.end_ns(), app.start_ns());
    EXPECT_GT(app.start_ns(), 0);
  }

  // The job has the first program's joules since it joined, and its name.
  v1::JobList jobs;
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::ListJobsRequest request;
    request.set_job_id("energy-job");
    ASSERT_TRUE(faults_->ListJobs(&context, request, &jobs).ok());
  }
  ASSERT_EQ(jobs.jobs_size(), 1);
  // Equal when the rank joined before the window: sums in another order,
  // so within rounding.
  EXPECT_GE(jobs.jobs(0).energy_j(), first_j - 1e-9 * first_j);
  EXPECT_LE(jobs.jobs(0).energy_j(), energyOf(*ended, first_pid) + 1e-6);
  EXPECT_EQ(jobs.jobs(0).program(), "omp_probe_clang");
  for (const auto& app : ended->apps())
    EXPECT_EQ(app.job_id(), app.pid() == first_pid ? "energy-job" : "") << app.pid();

  // And the CLI lists them.
  ProcessResult cli = runProgram({envOr("NK_CLI"), "--socket", daemon_.socket().string(), "apps", "--ended", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  auto json = nlohmann::json::parse(cli.out);
  ASSERT_EQ(json["apps"].size(), 2u) << cli.out;
  for (const auto& app : json["apps"]) EXPECT_GT(app["energy_j"].get<double>(), 0) << cli.out;
  cli = runProgram({envOr("NK_CLI"), "--socket", daemon_.socket().string(), "apps", "--ended"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("ENERGY"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find(std::to_string(first_pid)), std::string::npos) << cli.out;
  cli = runProgram({envOr("NK_CLI"), "--socket", daemon_.socket().string(), "jobs", "--job", "energy-job"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("omp_probe_clang"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("ENERGY"), std::string::npos) << cli.out;
  cli = runProgram({envOr("NK_CLI"), "--socket", daemon_.socket().string(), "jobs", "--job", "no-such-job"});
  EXPECT_NE(cli.exit_code, 0) << cli.out;
  EXPECT_NE(cli.err.find("no job 'no-such-job'"), std::string::npos) << cli.err;
}

}  // namespace
}  // namespace nk::test
