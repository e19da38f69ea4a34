// Integration tests: a real nodekeeperd on an emulated node, driven through
// the real CLI and a gRPC client over its Unix socket.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "nodekeeper/v1/node.grpc.pb.h"
#include "protos/health.grpc.pb.h"
#include "protos/reflection.grpc.pb.h"
#include "testlib/daemon_fixture.h"
#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;

class NodeDaemonTest : public DaemonFixture {
 protected:
  NodeDaemonTest() : DaemonFixture("it") {}
  void SetUp() override {
    DaemonFixture::SetUp();
    node_ = v1::NodeService::NewStub(channel_);
  }

  ProcessResult cli(std::vector<std::string> args, std::optional<uid_t> as = std::nullopt) {
    args.insert(args.begin(), {as ? cliForOtherUsers() : cliPath(), "--socket", daemon_.socket().string()});
    return runProgram(args, as);
  }
  // The build tree may sit in a directory other users cannot enter (a clone
  // in a 0700 temp dir): they run a copy from the shared test directory.
  std::string cliForOtherUsers() {
    auto copy = dir_ / "nodekeeper";
    if (!std::filesystem::exists(copy)) {
      std::filesystem::copy_file(cliPath(), copy);
      std::filesystem::permissions(copy, std::filesystem::perms(0755));
    }
    return copy.string();
  }
  std::filesystem::path policyFile(int policy, const std::string& file) {
    return daemon_.sysfs() / "devices/system/cpu/cpufreq" / ("policy" + std::to_string(policy)) / file;
  }
  v1::TelemetrySnapshot telemetry(bool fresh = true) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::GetTelemetryRequest request;
    request.set_fresh(fresh);
    v1::TelemetrySnapshot snapshot;
    EXPECT_TRUE(node_->GetTelemetry(&context, request, &snapshot).ok());
    return snapshot;
  }
  // Polls until `predicate` holds or `timeout` passes.
  template <typename Predicate>
  bool eventually(Predicate predicate, std::chrono::milliseconds timeout = 5000ms) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (predicate()) return true;
      std::this_thread::sleep_for(20ms);
    }
    return predicate();
  }
  // Every cpufreq control file of every policy, to prove nothing changed.
  std::string controlFiles() {
    std::string all;
    for (int p = 0; p < 12; ++p)
      for (const char* f : {"scaling_min_freq", "scaling_max_freq", "scaling_governor", "scaling_setspeed"})
        all += readTrimmed(policyFile(p, f)) + ";";
    return all;
  }

  std::unique_ptr<v1::NodeService::Stub> node_;
};

TEST_F(NodeDaemonTest, TopologyMatchesProfile) {
  grpc::ClientContext context;
  v1::Topology topology;
  ASSERT_TRUE(node_->GetTopology(&context, v1::GetTopologyRequest(), &topology).ok());
  EXPECT_TRUE(topology.emulated());
  EXPECT_EQ(topology.profile(), "xeon-e5-2630");
  EXPECT_EQ(topology.packages(), 2u);
  ASSERT_EQ(topology.cores_size(), 12);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(topology.cores(i).id(), static_cast<uint32_t>(i));
    EXPECT_EQ(topology.cores(i).package(), static_cast<uint32_t>(i / 6));
    EXPECT_EQ(topology.cores(i).core_id(), static_cast<uint32_t>(i % 6));
  }
  EXPECT_NE(topology.cpu_model().find("E5-2630"), std::string::npos);

  auto status = cli({"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  auto json = nlohmann::json::parse(status.out);
  ASSERT_EQ(json["cores"].size(), 12u);
  for (const auto& core : json["cores"]) {
    EXPECT_TRUE(core.contains("id"));
    EXPECT_TRUE(core.contains("package"));
    EXPECT_TRUE(core.contains("governor"));
    EXPECT_TRUE(core.contains("temperature_c"));
    EXPECT_GE(core["frequency_khz"].get<uint64_t>(), 1200000u);
    EXPECT_LE(core["frequency_khz"].get<uint64_t>(), 2600000u);
  }
  EXPECT_EQ(json["cores"][7]["package"], 1);
}

TEST_F(NodeDaemonTest, AdminFrequencyWriteLandsInSysfsAndTelemetry) {
  auto set_max = cli({"freq", "set", "--cpu", "0-3", "--max", "1.8GHz"});
  ASSERT_EQ(set_max.exit_code, 0) << set_max.err;
  for (int p = 0; p < 4; ++p) EXPECT_EQ(readTrimmed(policyFile(p, "scaling_max_freq")), "1800000");
  EXPECT_EQ(readTrimmed(policyFile(4, "scaling_max_freq")), "2600000");
  EXPECT_TRUE(eventually([&] {
    auto t = telemetry();
    return t.cores(2).max_khz() == 1800000 && t.cores(2).cur_khz() <= 1800000;
  }));

  auto set_speed = cli({"freq", "set", "--cpu", "5", "--speed", "1500MHz"});
  ASSERT_EQ(set_speed.exit_code, 0) << set_speed.err;
  EXPECT_EQ(readTrimmed(policyFile(5, "scaling_governor")), "userspace");
  EXPECT_EQ(readTrimmed(policyFile(5, "scaling_setspeed")), "1500000");
  EXPECT_TRUE(eventually([&] { return readTrimmed(policyFile(5, "scaling_cur_freq")) == "1500000"; }));
  EXPECT_TRUE(eventually([&] {
    auto t = telemetry();
    return t.cores(5).cur_khz() == 1500000 && t.cores(5).governor() == "userspace";
  }));

  auto get = cli({"freq", "get", "--json"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_NE(get.out.find("1500000"), std::string::npos);
}

TEST_F(NodeDaemonTest, NonAdminWriteIsRefusedAndChangesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run the CLI as another user";
  std::string before = controlFiles();
  auto refused = cli({"freq", "set", "--cpu", "0-3", "--max", "1.8GHz"}, kNobody);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("permission denied"), std::string::npos) << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  auto governor = cli({"governor", "set", "performance"}, kNobody);
  EXPECT_EQ(governor.exit_code, 1);
  auto cap = cli({"power", "cap", "set", "40W"}, kNobody);
  EXPECT_EQ(cap.exit_code, 1);
  EXPECT_EQ(controlFiles(), before);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "saved-controls.json"));
  // Reading is for anyone.
  auto status = cli({"status", "--json"}, kNobody);
  EXPECT_EQ(status.exit_code, 0) << status.err;
}

TEST_F(NodeDaemonTest, BadInputsGetOneLineErrorsAndChangeNothing) {
  std::string before = controlFiles();
  std::vector<std::vector<std::string>> bad = {
      {"freq", "set", "--max", "3GHz"},                  // above cpuinfo_max_freq
      {"freq", "set", "--min", "1GHz"},                  // below cpuinfo_min_freq
      {"freq", "set", "--max", "1.85GHz"},               // not in the table
      {"freq", "set", "--cpu", "99", "--max", "1.8GHz"},  // no such CPU
      {"freq", "set", "--cpu", "0-3", "--min", "2.2GHz", "--max", "2GHz"},
      {"freq", "set", "--max", "1.8furlongs"},
      {"freq", "set", "--cpu", "3-1", "--max", "1.8GHz"},
      {"governor", "set", "turbo"},
      {"power", "cap", "set", "0W"},
      {"power", "cap", "set", "40W", "--package", "5"},
      {"frobnicate"},
      {"status", "--bogus-flag"},
  };
  for (const auto& args : bad) {
    auto result = cli(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(result.exit_code, 1) << joined << result.out << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << joined << ": " << result.err;
    EXPECT_EQ(result.err.rfind("nodekeeper: ", 0), 0u) << joined << ": " << result.err;
  }
  EXPECT_EQ(controlFiles(), before);

  // The same checks hold for a gRPC client that skips the CLI's own checks.
  grpc::ClientContext context;
  v1::SetFrequencyLimitsRequest request;
  request.set_max_khz(1850000);
  v1::FrequencyPolicies response;
  auto status = node_->SetFrequencyLimits(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("not an available frequency"), std::string::npos);
  EXPECT_EQ(controlFiles(), before);
}

TEST_F(NodeDaemonTest, ControlsRestoredAfterKillAndRestart) {
  auto rapl1 = daemon_.sysfs() / "class/powercap/intel-rapl:1";
  std::string original_limit = readTrimmed(rapl1 / "constraint_0_power_limit_uw");
  std::string original_enabled = readTrimmed(rapl1 / "enabled");
  ASSERT_EQ(cli({"freq", "set", "--cpu", "0-3", "--max", "1.8GHz"}).exit_code, 0);
  ASSERT_EQ(cli({"governor", "set", "performance", "--cpu", "6"}).exit_code, 0);
  ASSERT_EQ(cli({"power", "cap", "set", "40W", "--package", "1"}).exit_code, 0);
  EXPECT_EQ(readTrimmed(rapl1 / "constraint_0_power_limit_uw"), "40000000");
  EXPECT_EQ(readTrimmed(rapl1 / "enabled"), "1");
  ASSERT_TRUE(std::filesystem::exists(dir_ / "saved-controls.json"));

  daemon_.kill9();
  // The crash leaves the hardware as it was: nobody restored it.
  EXPECT_EQ(readTrimmed(policyFile(0, "scaling_max_freq")), "1800000");
  EXPECT_EQ(readTrimmed(policyFile(6, "scaling_governor")), "performance");

  ASSERT_TRUE(daemon_.start(dir_.path())) << daemon_.lastError();
  for (int p = 0; p < 4; ++p) EXPECT_EQ(readTrimmed(policyFile(p, "scaling_max_freq")), "2600000");
  EXPECT_EQ(readTrimmed(policyFile(6, "scaling_governor")), "ondemand");
  EXPECT_EQ(readTrimmed(rapl1 / "constraint_0_power_limit_uw"), original_limit);
  EXPECT_EQ(readTrimmed(rapl1 / "enabled"), original_enabled);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "saved-controls.json"));
  EXPECT_NE(daemon_.lastError().find("restored"), std::string::npos) << daemon_.lastError();
}

TEST_F(NodeDaemonTest, CleanStopRestoresControls) {
  ASSERT_EQ(cli({"freq", "set", "--speed", "2GHz", "--cpu", "1"}).exit_code, 0);
  EXPECT_EQ(readTrimmed(policyFile(1, "scaling_governor")), "userspace");
  EXPECT_EQ(daemon_.stop(), 0);
  EXPECT_EQ(readTrimmed(policyFile(1, "scaling_governor")), "ondemand");
  EXPECT_FALSE(std::filesystem::exists(daemon_.socket()));
}

// The daemon re-executes itself (MallocTuning) as /proc/self/exe, which
// would name it "exe" where operators look for it.
TEST_F(NodeDaemonTest, IsNamedNodekeeperdWhereOperatorsLook) {
  const std::string proc = "/proc/" + std::to_string(daemon_.pid());
  EXPECT_EQ(readTrimmed(proc + "/comm"), "nodekeeperd");
  for (const auto& thread : std::filesystem::directory_iterator(proc + "/task"))
    EXPECT_NE(readTrimmed(thread.path() / "comm"), "exe") << thread.path();
}

TEST_F(NodeDaemonTest, ServesHealthAndReflection) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, grpc::health::v1::HealthCheckRequest(), &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
  grpc::ClientContext stream_context;
  auto stream = reflection->ServerReflectionInfo(&stream_context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse listing;
  ASSERT_TRUE(stream->Read(&listing));
  std::set<std::string> names;
  for (const auto& service : listing.list_services_response().service()) names.insert(service.name());
  EXPECT_TRUE(names.count("nodekeeper.v1.NodeService"));
  EXPECT_TRUE(names.count("nodekeeper.v1.AppsService"));
  EXPECT_TRUE(names.count("grpc.health.v1.Health"));
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(NodeDaemonTest, StreamsTelemetry) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  v1::StreamTelemetryRequest request;
  request.set_interval_ms(100);
  auto reader = node_->StreamTelemetry(&context, request);
  v1::TelemetrySnapshot snapshot;
  int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(reader->Read(&snapshot));
    EXPECT_EQ(snapshot.cores_size(), 12);
    EXPECT_GT(snapshot.monotonic_ns(), last);
    last = snapshot.monotonic_ns();
  }
  context.TryCancel();

  auto watch = cli({"watch", "--count", "3", "--json", "--interval", "0.1"});
  ASSERT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_EQ(std::count(watch.out.begin(), watch.out.end(), '\n'), 3) << watch.out;
}

TEST_F(NodeDaemonTest, StreamRejectsTooShortInterval) {
  grpc::ClientContext context;
  v1::StreamTelemetryRequest request;
  request.set_interval_ms(1);
  auto reader = node_->StreamTelemetry(&context, request);
  v1::TelemetrySnapshot snapshot;
  EXPECT_FALSE(reader->Read(&snapshot));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}


// What the emulator's model computed at one update, next to the raw RAPL
// counter values it wrote in that same update.
struct ModelPoint {
  uint64_t seq = 0;
  double elapsed_s = 0;
  std::vector<double> energy_j;
  std::vector<uint64_t> raw_uj;
};

std::optional<ModelPoint> readModel(const std::filesystem::path& path) {
  std::istringstream in(readFile(path));
  ModelPoint point;
  std::string word;
  while (in >> word) {
    if (word == "seq") in >> point.seq;
    else if (word == "elapsed_s") in >> point.elapsed_s;
    else if (word == "package") {
      size_t id;
      double energy, power;
      uint64_t raw;
      std::string k1, k2, k3;
      in >> id >> k1 >> energy >> k2 >> raw >> k3 >> power;
      point.energy_j.push_back(energy);
      point.raw_uj.push_back(raw);
    }
  }
  if (point.seq == 0 || point.energy_j.empty()) return std::nullopt;
  return point;
}

class RaplAgreementTest : public ::testing::TestWithParam<uint64_t> {};

// The daemon's RAPL path (sysfs read, wraparound, accumulation) against the
// emulator's physics: pair a fresh telemetry sample with the model update
// whose raw counters it read, twice, seconds apart, and compare energies and
// average powers.
TEST_P(RaplAgreementTest, RaplPowerAgreesWithPhysicsModel) {
  uint64_t range_uj = GetParam();
  TempDir dir("rapl", TempDir::Access::kShared);
  std::string profile;
  if (range_uj != 0) {
    std::string text = readFile(std::string(std::getenv("NK_PROFILES_DIR")) + "/xeon-e5-2630.toml");
    size_t at = text.find("max_energy_range_uj = ");
    ASSERT_NE(at, std::string::npos);
    size_t end = text.find('\n', at);
    text.replace(at, end - at, "max_energy_range_uj = " + std::to_string(range_uj));
    profile = (dir / "small-range.toml").string();
    std::ofstream(profile) << text;
  }
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {}, profile)) << daemon.lastError();
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto node = v1::NodeService::NewStub(channel);

  struct Aligned {
    ModelPoint model;
    v1::TelemetrySnapshot telemetry;
  };
  auto aligned = [&]() -> std::optional<Aligned> {
    for (int attempt = 0; attempt < 500; ++attempt) {
      grpc::ClientContext context;
      v1::GetTelemetryRequest request;
      request.set_fresh(true);
      v1::TelemetrySnapshot snapshot;
      if (!node->GetTelemetry(&context, request, &snapshot).ok()) continue;
      auto model = readModel(dir / "emulator-model.txt");
      if (!model || model->raw_uj.size() != static_cast<size_t>(snapshot.packages_size())) continue;
      bool same = true;
      for (int p = 0; p < snapshot.packages_size(); ++p)
        same = same && snapshot.packages(p).raw_energy_uj() == model->raw_uj[static_cast<size_t>(p)];
      if (same) return Aligned{*model, snapshot};
    }
    return std::nullopt;
  };
  std::this_thread::sleep_for(500ms);
  auto first = aligned();
  ASSERT_TRUE(first) << "never read telemetry and the model from the same update";
  uint64_t min_raw = UINT64_MAX;
  uint64_t wraps_seen = 0;
  uint64_t last_raw = first->telemetry.packages(0).raw_energy_uj();
  for (int i = 0; i < 40; ++i) {  // ~4 s, watching the counter for wraps
    std::this_thread::sleep_for(100ms);
    grpc::ClientContext context;
    v1::TelemetrySnapshot snapshot;
    ASSERT_TRUE(node->GetTelemetry(&context, v1::GetTelemetryRequest(), &snapshot).ok());
    uint64_t raw = snapshot.packages(0).raw_energy_uj();
    if (raw < last_raw) ++wraps_seen;
    last_raw = raw;
    min_raw = std::min(min_raw, raw);
  }
  auto second = aligned();
  ASSERT_TRUE(second);
  double model_dt = second->model.elapsed_s - first->model.elapsed_s;
  double daemon_dt = (second->telemetry.monotonic_ns() - first->telemetry.monotonic_ns()) / 1e9;
  ASSERT_GT(model_dt, 3.0);
  for (int p = 0; p < first->telemetry.packages_size(); ++p) {
    double model_j = second->model.energy_j[static_cast<size_t>(p)] - first->model.energy_j[static_cast<size_t>(p)];
    double daemon_j = second->telemetry.packages(p).energy_j() - first->telemetry.packages(p).energy_j();
    EXPECT_NEAR(daemon_j, model_j, 0.01 * model_j) << "package " << p;
    double model_w = model_j / model_dt;
    double daemon_w = daemon_j / daemon_dt;
    EXPECT_NEAR(daemon_w, model_w, 0.01 * model_w) << "package " << p << ": daemon " << daemon_w << " W, model "
                                                    << model_w << " W";
    EXPECT_GT(model_w, 5.0);
  }
  if (range_uj != 0) {
    EXPECT_GE(wraps_seen, 1u) << "the counter should have wrapped (range " << range_uj << " uJ)";
  }
  daemon.stop();
}

// 0: the profile's real range; 30 J: the counter wraps every few tenths of a second.
INSTANTIATE_TEST_SUITE_P(Ranges, RaplAgreementTest, ::testing::Values(uint64_t{0}, uint64_t{30000000}));


// intel_pstate in active mode has no userspace governor and no frequency
// table: a speed becomes min = max, any frequency in range is accepted.
TEST(IntelPstateNode, SpeedPinsLimitsAndUserspaceIsRefused) {
  TempDir dir("pstate", TempDir::Access::kShared);
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {}, "intel-pstate-laptop")) << daemon.lastError();
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {cliPath(), "--socket", daemon.socket().string()});
    return runProgram(args);
  };
  auto policy0 = daemon.sysfs() / "devices/system/cpu/cpufreq/policy0";
  EXPECT_FALSE(std::filesystem::exists(policy0 / "scaling_available_frequencies"));
  EXPECT_EQ(readTrimmed(daemon.sysfs() / "devices/system/cpu/intel_pstate/status"), "active");
  auto speed = cli({"freq", "set", "--speed", "2.05GHz"});
  ASSERT_EQ(speed.exit_code, 0) << speed.err;
  EXPECT_EQ(readTrimmed(policy0 / "scaling_min_freq"), "2050000");
  EXPECT_EQ(readTrimmed(policy0 / "scaling_max_freq"), "2050000");
  EXPECT_EQ(readTrimmed(policy0 / "scaling_governor"), "powersave");
  auto userspace = cli({"governor", "set", "userspace"});
  EXPECT_EQ(userspace.exit_code, 1);
  EXPECT_NE(userspace.err.find("not available"), std::string::npos) << userspace.err;
  auto status = cli({"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(nlohmann::json::parse(status.out)["cores"].size(), 4u);
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_NE(readTrimmed(policy0 / "scaling_min_freq"), "2050000");
}

TEST(NodeDaemonStartup, BadFlagsConfigAndProfileAreClearErrors) {
  TempDir dir("bad", TempDir::Access::kShared);
  auto unknown = runProgram({daemonPath(), "--emulate", "--state-dir", dir.path().string(), "--frobnicate"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("--frobnicate"), std::string::npos) << unknown.err;

  std::ofstream(dir / "broken.toml") << "socket = \"/tmp/a\"\nstate_dir = \n";
  auto config = runProgram({daemonPath(), "--config", (dir / "broken.toml").string()});
  EXPECT_EQ(config.exit_code, 1);
  EXPECT_NE(config.err.find("broken.toml:2"), std::string::npos) << config.err;

  std::ofstream(dir / "profile.toml") << "name = \"x\"\n[topology]\npackages = -2\n";
  auto profile = runProgram({daemonPath(), "--emulate", (dir / "profile.toml").string(), "--state-dir",
                             dir.path().string(), "--socket", (dir / "s.sock").string(), "--config", "/dev/null"});
  EXPECT_EQ(profile.exit_code, 1);
  EXPECT_NE(profile.err.find("profile.toml"), std::string::npos) << profile.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "s.sock"));

  auto no_profile = runProgram({daemonPath(), "--emulate", "no-such-machine", "--state-dir", dir.path().string(),
                                "--config", "/dev/null"});
  EXPECT_EQ(no_profile.exit_code, 1);
  EXPECT_NE(no_profile.err.find("no-such-machine"), std::string::npos) << no_profile.err;
}

TEST(NodeDaemonStartup, SecondDaemonOnSameSocketIsRefused) {
  TempDir dir("two", TempDir::Access::kShared);
  DaemonProcess first;
  ASSERT_TRUE(first.start(dir.path())) << first.lastError();
  auto second = runProgram({daemonPath(), "--emulate", "--state-dir", (dir / "other").string(), "--socket",
                            first.socket().string(), "--config", "/dev/null"});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("already serving"), std::string::npos) << second.err;
  EXPECT_TRUE(std::filesystem::exists(first.socket()));
  first.stop();
}

}  // namespace
}  // namespace nk::test
