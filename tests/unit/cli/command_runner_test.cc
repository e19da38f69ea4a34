// Runs the CLI's commands against a fake NodeService on a Unix socket: the
// client, its error wording and the runner's output, without nodekeeperd.
#include "cli/command_runner.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "nodekeeper/v1/node.grpc.pb.h"
#include "testlib/temp_dir.h"

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;
using namespace std::chrono_literals;

class FakeNodeService final : public pb::NodeService::Service {
 public:
  std::atomic<bool> stream_silent{false};
  std::atomic<int> interrupt_after{0};  // raise SIGINT after this many streamed snapshots
  std::atomic<int> streams_cancelled{0};
  pb::SetFrequencyLimitsRequest last_limits;

  grpc::Status GetTopology(grpc::ServerContext*, const pb::GetTopologyRequest*, pb::Topology* reply) override {
    reply->set_hostname("fake01");
    reply->set_cpu_model("Fake CPU");
    reply->set_packages(1);
    reply->set_pus(2);
    auto* core = reply->add_cores();
    core->set_id(0);
    core->add_cpus(0);
    core->add_cpus(1);
    return grpc::Status::OK;
  }

  grpc::Status GetTelemetry(grpc::ServerContext*, const pb::GetTelemetryRequest*, pb::TelemetrySnapshot* reply) override {
    fill(reply, 1);
    return grpc::Status::OK;
  }

  grpc::Status StreamTelemetry(grpc::ServerContext* context, const pb::StreamTelemetryRequest* request,
                               grpc::ServerWriter<pb::TelemetrySnapshot>* writer) override {
    auto interval = std::chrono::milliseconds(request->interval_ms() == 0 ? 1000 : request->interval_ms());
    for (int64_t n = 1; !context->IsCancelled(); ++n) {
      if (!stream_silent) {
        pb::TelemetrySnapshot snapshot;
        fill(&snapshot, n);
        if (!writer->Write(snapshot)) break;
        if (interrupt_after != 0 && n == interrupt_after) ::kill(::getpid(), SIGINT);
      }
      std::this_thread::sleep_for(interval);
    }
    if (context->IsCancelled()) ++streams_cancelled;
    return grpc::Status::OK;
  }

  grpc::Status SetFrequencyLimits(grpc::ServerContext*, const pb::SetFrequencyLimitsRequest* request,
                                  pb::FrequencyPolicies* reply) override {
    last_limits = *request;
    if (request->max_khz() == 1000000)
      return {grpc::StatusCode::PERMISSION_DENIED,
              "permission denied: setting frequency limits needs the admin role (root or group nodekeeper)"};
    reply->set_message("set scaling_max_freq to 2.00 GHz on policy0");
    auto* policy = reply->add_policies();
    policy->set_id(0);
    policy->add_cpus(0);
    policy->set_max_khz(request->max_khz());
    return grpc::Status::OK;
  }

  grpc::Status SetPowerCap(grpc::ServerContext*, const pb::SetPowerCapRequest*, pb::PowerCaps*) override {
    return {grpc::StatusCode::UNAVAILABLE, "cannot write /sys/class/powercap/intel-rapl:0/enabled: Read-only file system"};
  }

  grpc::Status WhoAmI(grpc::ServerContext*, const pb::WhoAmIRequest*, pb::Identity* reply) override {
    std::this_thread::sleep_for(600ms);
    reply->set_role(pb::ROLE_ANYONE);
    return grpc::Status::OK;
  }

 private:
  static void fill(pb::TelemetrySnapshot* snapshot, int64_t n) {
    snapshot->set_timestamp_ns(n * 1000000000LL);
    auto* core = snapshot->add_cores();
    core->set_id(0);
    core->set_cur_khz(2000000);
    core->set_governor("ondemand");
    core->set_temperature_c(std::numeric_limits<double>::quiet_NaN());
    snapshot->set_node_power_w(10.0 * static_cast<double>(n));
  }
};

class CommandRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = (dir_ / "nk.sock").string();
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }

  // Runs `nodekeeper --socket <fake> ARGS...`, returning the exit code.
  int run(std::vector<std::string> args, bool terminal = false) {
    args.insert(args.begin(), {"--socket", socket_});
    out_.str("");
    err_.str("");
    auto invocation = CommandLine::parse(args);
    if (!invocation) {
      err_ << "nodekeeper: " << invocation.error().message << "\n";
      return 1;
    }
    CommandRunner runner(out_, err_, terminal);
    return runner.run(*invocation);
  }

  test::TempDir dir_{"cli-test"};
  std::string socket_;
  FakeNodeService service_;
  std::unique_ptr<grpc::Server> server_;
  std::ostringstream out_;
  std::ostringstream err_;
};

TEST_F(CommandRunnerTest, StatusJson) {
  ASSERT_EQ(run({"status", "--json"}), 0) << err_.str();
  auto parsed = nlohmann::json::parse(out_.str());
  EXPECT_EQ(parsed["hostname"], "fake01");
  EXPECT_EQ(parsed["cores"][0]["frequency_khz"], 2000000);
  EXPECT_TRUE(parsed["cores"][0]["temperature_c"].is_null());
  EXPECT_TRUE(err_.str().empty());
}

TEST_F(CommandRunnerTest, StatusText) {
  ASSERT_EQ(run({"status"}), 0) << err_.str();
  EXPECT_NE(out_.str().find("fake01"), std::string::npos);
  EXPECT_NE(out_.str().find("2.00 GHz"), std::string::npos);
}

TEST_F(CommandRunnerTest, FreqSetSendsKhzAndPrintsTheDaemonsMessage) {
  ASSERT_EQ(run({"freq", "set", "--cpu", "0", "--max", "2GHz"}), 0) << err_.str();
  EXPECT_EQ(service_.last_limits.max_khz(), 2000000u);
  ASSERT_EQ(service_.last_limits.cpus().cpus_size(), 1);
  EXPECT_EQ(out_.str().rfind("set scaling_max_freq to 2.00 GHz on policy0\n", 0), 0u) << out_.str();
  EXPECT_NE(out_.str().find("policy0"), std::string::npos);
}

TEST_F(CommandRunnerTest, DaemonErrorIsOneLineWithItsMessage) {
  EXPECT_EQ(run({"freq", "set", "--max", "1GHz"}), 1);
  EXPECT_EQ(err_.str(),
            "nodekeeper: permission denied: setting frequency limits needs the admin role (root or group nodekeeper)\n");
  EXPECT_TRUE(out_.str().empty());
}

TEST_F(CommandRunnerTest, DaemonUnavailableIsNotCannotReach) {
  EXPECT_EQ(run({"power", "cap", "set", "45W"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: cannot write /sys/class/powercap/intel-rapl:0/enabled: Read-only file system\n");
}

TEST_F(CommandRunnerTest, UnimplementedMethod) {
  EXPECT_EQ(run({"policy", "get"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: nodekeeperd does not implement GetPolicy (is it older than this nodekeeper?)\n");
}

TEST_F(CommandRunnerTest, DeadlineExceeded) {
  EXPECT_EQ(run({"whoami", "--timeout", "0.2"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: nodekeeperd at " + socket_ + " did not answer WhoAmI within 0.2 s (see --timeout)\n");
}

TEST_F(CommandRunnerTest, LocalValidationFailsBeforeCalling) {
  EXPECT_EQ(run({"freq", "set", "--min", "1.2Ghzz"}), 1);
  EXPECT_EQ(err_.str().rfind("nodekeeper: --min: unknown frequency unit", 0), 0u) << err_.str();
  EXPECT_EQ(service_.last_limits.min_khz(), 0u);
}

TEST_F(CommandRunnerTest, CannotReach) {
  std::string missing = (dir_ / "missing.sock").string();
  auto invocation = CommandLine::parse({"--socket", missing, "status"});
  ASSERT_TRUE(invocation.ok());
  CommandRunner runner(out_, err_, false);
  EXPECT_EQ(runner.run(*invocation), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: cannot reach nodekeeperd at " + missing +
                            ": No such file or directory (is the daemon running? set --socket or NODEKEEPER_SOCKET)\n");
}

TEST_F(CommandRunnerTest, WatchNdjsonStopsAfterCount) {
  ASSERT_EQ(run({"watch", "--json", "--interval", "0.02", "--count", "3"}), 0) << err_.str();
  std::istringstream lines(out_.str());
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    auto parsed = nlohmann::json::parse(line);
    EXPECT_EQ(parsed["hostname"], "fake01");
    EXPECT_DOUBLE_EQ(parsed["node_power_w"].get<double>(), 10.0 * (count + 1));
  }
  EXPECT_EQ(count, 3);
}

TEST_F(CommandRunnerTest, WatchPlainSeparatesSnapshotsWithBlankLines) {
  ASSERT_EQ(run({"watch", "--interval", "0.02", "--count", "2"}), 0) << err_.str();
  std::string text = out_.str();
  EXPECT_EQ(text.find("\x1b"), std::string::npos);
  size_t first = text.find("Host");
  size_t second = text.find("\n\nHost", first);
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_EQ(text.find("Host", second + 6), std::string::npos);
}

TEST_F(CommandRunnerTest, WatchOnTerminalRedraws) {
  ASSERT_EQ(run({"watch", "--interval", "0.02", "--count", "2"}, true), 0) << err_.str();
  EXPECT_EQ(out_.str().rfind("\x1b[H\x1b[2J", 0), 0u);
  EXPECT_NE(out_.str().find("Ctrl-C"), std::string::npos);
}

TEST_F(CommandRunnerTest, WatchEndsCleanlyOnSigint) {
  service_.interrupt_after = 2;
  auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(run({"watch", "--json", "--interval", "0.05"}), 0) << err_.str();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
  EXPECT_TRUE(err_.str().empty()) << err_.str();
  // The default disposition is back: the handler was uninstalled.
  struct sigaction current {};
  ::sigaction(SIGINT, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
}

TEST_F(CommandRunnerTest, WatchReportsASilentStream) {
  service_.stream_silent = true;
  EXPECT_EQ(run({"watch", "--interval", "0.05", "--timeout", "0.3"}), 1);
  EXPECT_EQ(err_.str(), "nodekeeper: no telemetry from nodekeeperd at " + socket_ + " for 0.35 s\n");
}

}  // namespace
}  // namespace nk::cli
