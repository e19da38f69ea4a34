#include "platform/emulated/emulated_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "testlib/files.h"
#include "testlib/temp_dir.h"
#include "testlib/wait_for.h"
#include "test_profiles.h"

namespace nk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::readFile;
using test::waitFor;
using test::writeControl;

class EmulatedNodeTest : public ::testing::Test {
 protected:
  std::unique_ptr<EmulatedNode> start(NodeProfile profile = NodeProfile::xeonE5_2630(), double interval_s = 0.01,
                                      bool ignore_host_load = false) {
    EmulatedNode::Options options;
    options.state_dir = dir_.path();
    options.ignore_host_load = ignore_host_load;
    options.update_interval_s = interval_s;
    auto node = EmulatedNode::start(std::move(profile), options);
    EXPECT_TRUE(node.ok()) << (node.ok() ? "" : node.error().message);
    return node.ok() ? std::move(node).value() : nullptr;
  }
  fs::path sys() const { return dir_.path() / "sysfs/sys"; }
  fs::path policy(uint32_t n) const {
    return sys() / "devices/system/cpu/cpufreq" / ("policy" + std::to_string(n));
  }
  fs::path zone(uint32_t n) const { return sys() / "class/powercap" / ("intel-rapl:" + std::to_string(n)); }
  static uint64_t number(const fs::path& path) {
    std::string text = readFile(path);
    return text.empty() ? 0 : std::stoull(text);
  }

  test::TempDir dir_;
};

TEST_F(EmulatedNodeTest, RejectsBadOptions) {
  EmulatedNode::Options options;
  options.state_dir = dir_.path();
  options.update_interval_s = 0;
  EXPECT_FALSE(EmulatedNode::start(NodeProfile::xeonE5_2630(), options).ok());
  options.update_interval_s = 0.01;
  options.state_dir.clear();
  EXPECT_FALSE(EmulatedNode::start(NodeProfile::xeonE5_2630(), options).ok());
  NodeProfile bad = NodeProfile::xeonE5_2630();
  bad.voltage_min_v = 3;
  options.state_dir = dir_.path();
  EXPECT_FALSE(EmulatedNode::start(bad, options).ok());
}

TEST_F(EmulatedNodeTest, TreeLivesUnderTheStateDirectory) {
  auto node = start();
  ASSERT_TRUE(node);
  EXPECT_EQ(node->sysfsRoot(), dir_.path() / "sysfs");
  EXPECT_TRUE(fs::exists(node->sysfsRoot() / "sys/devices/system/cpu/cpufreq/policy11/scaling_cur_freq"));
  EXPECT_LT(node->hostCpuOf(11), std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(node->profile().name, "xeon-e5-2630");
}

TEST_F(EmulatedNodeTest, CurrentFrequencyFollowsUserspaceSetspeed) {
  auto node = start();
  ASSERT_TRUE(node);
  ASSERT_TRUE(writeControl(policy(3) / "scaling_governor", "userspace\n"));
  ASSERT_TRUE(writeControl(policy(3) / "scaling_setspeed", "2000000\n"));
  EXPECT_TRUE(waitFor([&] { return readFile(policy(3) / "scaling_cur_freq") == "2000000\n"; }))
      << readFile(policy(3) / "scaling_cur_freq");
  EXPECT_TRUE(waitFor([&] { return node->modelSnapshot().core_frequency_khz[3] == 2000000; }));

  // Above scaling_max_freq: the limit wins.
  ASSERT_TRUE(writeControl(policy(3) / "scaling_max_freq", "2200000\n"));
  ASSERT_TRUE(writeControl(policy(3) / "scaling_setspeed", "2500000\n"));
  EXPECT_TRUE(waitFor([&] { return readFile(policy(3) / "scaling_cur_freq") == "2200000\n"; }))
      << readFile(policy(3) / "scaling_cur_freq");
  // Below scaling_min_freq: likewise.
  ASSERT_TRUE(writeControl(policy(3) / "scaling_min_freq", "1500000\n"));
  ASSERT_TRUE(writeControl(policy(3) / "scaling_setspeed", "1300000\n"));
  EXPECT_TRUE(waitFor([&] { return readFile(policy(3) / "scaling_cur_freq") == "1500000\n"; }))
      << readFile(policy(3) / "scaling_cur_freq");
  // Another policy kept its governor.
  EXPECT_EQ(readFile(policy(4) / "scaling_governor"), "ondemand\n");
}

TEST_F(EmulatedNodeTest, GovernorsSetTheFrequency) {
  auto node = start();
  ASSERT_TRUE(node);
  ASSERT_TRUE(writeControl(policy(0) / "scaling_governor", "performance\n"));
  ASSERT_TRUE(writeControl(policy(1) / "scaling_governor", "powersave\n"));
  node->setExtraUtilisation(1, 1.0);  // powersave ignores the load
  node->setExtraUtilisation(2, 1.0);  // ondemand goes to max on it
  EXPECT_TRUE(waitFor([&] {
    return readFile(policy(0) / "scaling_cur_freq") == "2600000\n" &&
           readFile(policy(1) / "scaling_cur_freq") == "1200000\n" &&
           readFile(policy(2) / "scaling_cur_freq") == "2600000\n";
  })) << readFile(policy(0) / "scaling_cur_freq") << readFile(policy(1) / "scaling_cur_freq")
      << readFile(policy(2) / "scaling_cur_freq");
  EXPECT_TRUE(waitFor([&] { return node->modelSnapshot().core_utilisation[2] == 1.0; }));
}

// Every host CPU spinning while it lives: load from "other processes".
class HostSpinners {
 public:
  HostSpinners() {
    for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
  }
  ~HostSpinners() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

TEST_F(EmulatedNodeTest, HostLoadDrivesTheCoresUnlessIgnored) {
  const NodeProfile profile = NodeProfile::xeonE5_2630();
  HostSpinners spinners;
  {
    // The control: the host's load shows on the emulated cores.
    auto node = start(profile);
    ASSERT_TRUE(node);
    EXPECT_TRUE(waitFor([&] {
      for (double u : node->modelSnapshot().core_utilisation)
        if (u > profile.idle_utilisation + 0.2) return true;
      return false;
    }));
  }
  auto node = start(profile, 0.01, /*ignore_host_load=*/true);
  ASSERT_TRUE(node);
  node->setExtraUtilisation(3, 0.5);
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().core_utilisation[3] == 0.5; }));
  // Several host-load samples later, only what was reported drives a core.
  const uint64_t seq = node->modelSnapshot().update_seq;
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().update_seq > seq + 30; }));
  EmulatedNode::ModelSnapshot snap = node->modelSnapshot();
  for (uint32_t core = 0; core < snap.core_utilisation.size(); ++core)
    EXPECT_EQ(snap.core_utilisation[core], core == 3 ? 0.5 : profile.idle_utilisation) << "core " << core;
}

TEST_F(EmulatedNodeTest, PowerAtTheLowestClockIsALowerBoundOfWhatTheNodeDraws) {
  const NodeProfile profile = NodeProfile::xeonE5_2630();
  auto node = start(profile, 0.01, /*ignore_host_load=*/true);
  ASSERT_TRUE(node);
  // Each busy core adds to it; the uncores and the idle cores are in it.
  const double idle = node->powerAtLowestClockW(0);
  EXPECT_GT(idle, profile.packages * profile.uncore_power_w);
  EXPECT_GT(node->powerAtLowestClockW(1), idle);
  EXPECT_GT(node->powerAtLowestClockW(2), node->powerAtLowestClockW(1));
  EXPECT_GT(node->powerAtLowestClockW(12), node->powerAtLowestClockW(2));
  // Two cores busy at the lowest clock, the rest idle there: the node draws
  // at least that, and more as it warms.
  for (uint32_t core = 0; core < profile.cores(); ++core)
    ASSERT_TRUE(writeControl(policy(core) / "scaling_governor", "powersave\n"));
  node->setExtraUtilisation(0, 1.0);
  node->setExtraUtilisation(1, 1.0);
  ASSERT_TRUE(waitFor([&] {
    auto snap = node->modelSnapshot();
    for (uint64_t khz : snap.core_frequency_khz)
      if (khz != profile.frequencies_khz.front()) return false;
    return snap.core_utilisation[0] == 1.0 && snap.core_utilisation[1] == 1.0;
  }));
  const uint64_t seq = node->modelSnapshot().update_seq;
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().update_seq > seq + 5; }));
  double watts = 0;
  for (double w : node->modelSnapshot().package_power_w) watts += w;
  const double floor = node->powerAtLowestClockW(2);
  EXPECT_GE(watts, floor - 1e-9);
  EXPECT_LT(watts, floor * 1.25);  // the same state, a little warmer
}

TEST_F(EmulatedNodeTest, EnergyCounterAdvancesAtThePackagePower) {
  auto node = start();
  ASSERT_TRUE(node);
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().update_seq > 2; }));
  const uint64_t e0 = number(zone(0) / "energy_uj");
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(400ms);
  const uint64_t e1 = number(zone(0) / "energy_uj");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_GT(e1, e0);
  // Between an idle (~18 W) and a fully loaded (~91 W) package, with slack
  // for the scheduling of this test.
  const double watts = static_cast<double>(e1 - e0) / 1e6 / seconds;
  EXPECT_GT(watts, 10.0);
  EXPECT_LT(watts, 120.0);
  EmulatedNode::ModelSnapshot snap = node->modelSnapshot();
  EXPECT_GT(snap.package_energy_j[0], 0.0);
  EXPECT_GT(snap.elapsed_s, 0.3);
  EXPECT_GT(snap.package_power_w[1], 10.0);
  ASSERT_EQ(snap.core_temperature_c.size(), 12u);
}

// Like RAPL's, the counters move between the slower updates of the other
// outputs: a reader's window of two updates must not hold one or three.
// The loop writes them a fixed number of times an update, so the count is
// exact however late the thread runs.
TEST_F(EmulatedNodeTest, EnergyCountersMoveBetweenUpdates) {
  auto node = start(NodeProfile::xeonE5_2630(), /*interval_s=*/0.1);
  ASSERT_TRUE(node);
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().update_seq >= 3; }, 10s));
  const EmulatedNode::ModelSnapshot snap = node->modelSnapshot();
  // Ten writes an update, the update's own among them (0.1 s / 10 ms).
  EXPECT_GE(snap.energy_seq, (snap.update_seq - 1) * 10 + 1);
  EXPECT_LE(snap.energy_seq, (snap.update_seq + 1) * 10);
  const uint64_t before = number(zone(0) / "energy_uj");
  const uint64_t update = node->modelSnapshot().update_seq;
  ASSERT_TRUE(waitFor([&] { return number(zone(0) / "energy_uj") != before; }, 10s));
  EXPECT_EQ(node->modelSnapshot().update_seq, update) << "the counter moved only with an update";
}

TEST_F(EmulatedNodeTest, EnergyCounterWrapsAtTheRange) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  p.rapl_max_energy_range_uj = 2000000;  // 2 J: an idle package wraps it in ~0.1 s
  auto node = start(p);
  ASSERT_TRUE(node);
  EXPECT_EQ(readFile(zone(0) / "max_energy_range_uj"), "2000000\n");
  uint64_t previous = number(zone(0) / "energy_uj");
  int wraps = 0;
  auto deadline = std::chrono::steady_clock::now() + 3s;
  while (wraps < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(7ms);
    uint64_t now = number(zone(0) / "energy_uj");
    ASSERT_LT(now, 2000000u);
    if (now < previous) ++wraps;
    previous = now;
  }
  EXPECT_GE(wraps, 2);
  EXPECT_GT(node->modelSnapshot().package_energy_j[0], 2.0);
}

TEST_F(EmulatedNodeTest, TemperaturesRiseUnderLoad) {
  auto node = start();
  ASSERT_TRUE(node);
  for (uint32_t core = 0; core < 6; ++core) node->setExtraUtilisation(core, 1.0);
  const fs::path hwmon = sys() / "class/hwmon/hwmon0";
  // The core time constant is about a second: a few degrees within a second.
  EXPECT_TRUE(waitFor([&] { return number(hwmon / "temp2_input") > 30000; }, 4000ms)) << readFile(hwmon / "temp2_input");
  EXPECT_GE(number(hwmon / "temp1_input"), number(hwmon / "temp2_input") - 1000);
  // Package 1 runs on the host's load alone, which may be anything.
  EmulatedNode::ModelSnapshot snap = node->modelSnapshot();
  EXPECT_GT(snap.package_power_w[0], 60.0);
  EXPECT_GE(snap.package_power_w[0], snap.package_power_w[1]);
}

TEST_F(EmulatedNodeTest, PowerLimitCapsThePackage) {
  auto node = start();
  ASSERT_TRUE(node);
  for (uint32_t core = 0; core < 12; ++core) {
    ASSERT_TRUE(writeControl(policy(core) / "scaling_governor", "performance\n"));
    node->setExtraUtilisation(core, 1.0);
  }
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().core_frequency_khz[0] == 2600000; }));
  ASSERT_GT(node->modelSnapshot().package_power_w[0], 60.0);
  ASSERT_TRUE(writeControl(zone(0) / "constraint_0_power_limit_uw", "50000000\n"));
  EXPECT_TRUE(waitFor([&] {
    auto s = node->modelSnapshot();
    return s.core_frequency_khz[0] < 2600000 && s.package_power_w[0] < 52.0;
  })) << node->modelSnapshot().package_power_w[0];
  EXPECT_LT(number(policy(0) / "scaling_cur_freq"), 2600000u);
  // The other package has its own limit and keeps running flat out.
  EXPECT_EQ(node->modelSnapshot().core_frequency_khz[6], 2600000u);

  // Disabling the limit lifts the cap again.
  ASSERT_TRUE(writeControl(zone(0) / "enabled", "0\n"));
  EXPECT_TRUE(waitFor([&] { return node->modelSnapshot().core_frequency_khz[0] == 2600000; }));
}

TEST_F(EmulatedNodeTest, StopsPromptlyEvenWithALongInterval) {
  auto node = start(NodeProfile::xeonE5_2630(), 2.0);
  ASSERT_TRUE(node);
  std::this_thread::sleep_for(20ms);
  auto t0 = std::chrono::steady_clock::now();
  node.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 100ms);
}

TEST_F(EmulatedNodeTest, RestartKeepsControlsAndContinuesTheEnergyCounter) {
  uint64_t energy_before = 0;
  {
    auto node = start();
    ASSERT_TRUE(node);
    ASSERT_TRUE(writeControl(policy(2) / "scaling_governor", "userspace\n"));
    ASSERT_TRUE(writeControl(policy(2) / "scaling_setspeed", "1900000\n"));
    ASSERT_TRUE(waitFor([&] { return readFile(policy(2) / "scaling_cur_freq") == "1900000\n"; }));
    std::this_thread::sleep_for(100ms);
  }
  energy_before = number(zone(1) / "energy_uj");
  ASSERT_GT(energy_before, 0u);
  auto node = start();
  ASSERT_TRUE(node);
  EXPECT_EQ(readFile(policy(2) / "scaling_governor"), "userspace\n");
  EXPECT_EQ(readFile(policy(2) / "scaling_setspeed"), "1900000\n");
  ASSERT_TRUE(waitFor([&] { return node->modelSnapshot().update_seq > 3; }));
  EXPECT_EQ(readFile(policy(2) / "scaling_cur_freq"), "1900000\n");
  EXPECT_GT(number(zone(1) / "energy_uj"), energy_before);
}

TEST_F(EmulatedNodeTest, IntelPstateLaptopRuns) {
  NodeProfile p = test::laptopProfile();
  auto node = start(p);
  ASSERT_TRUE(node);
  node->setExtraUtilisation(1, 1.0);
  // Core 1 is policy2 (CPUs 2 and 3); powersave follows its load to max.
  EXPECT_TRUE(waitFor([&] { return readFile(policy(2) / "scaling_cur_freq") == "3600000\n"; }))
      << readFile(policy(2) / "scaling_cur_freq");
  ASSERT_TRUE(writeControl(policy(2) / "scaling_max_freq", "2000000\n"));
  EXPECT_TRUE(waitFor([&] { return readFile(policy(2) / "scaling_cur_freq") == "2000000\n"; }))
      << readFile(policy(2) / "scaling_cur_freq");
}

}  // namespace
}  // namespace nk
