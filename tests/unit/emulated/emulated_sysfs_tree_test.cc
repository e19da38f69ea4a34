#include "platform/emulated/emulated_sysfs_tree.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "testlib/files.h"
#include "testlib/temp_dir.h"
#include "test_profiles.h"

namespace nk {
namespace {

namespace fs = std::filesystem;
using test::readFile;
using test::laptopProfile;
using test::writeControl;


class EmulatedSysfsTreeTest : public ::testing::Test {
 protected:
  EmulatedSysfsTree openTree(const NodeProfile& profile) {
    auto tree = EmulatedSysfsTree::open(dir_.path(), profile);
    EXPECT_TRUE(tree.ok()) << (tree.ok() ? "" : tree.error().message);
    return std::move(tree).value();
  }
  fs::path sys() const { return dir_.path() / "sys"; }
  fs::path policy(uint32_t n) const {
    return sys() / "devices/system/cpu/cpufreq" / ("policy" + std::to_string(n));
  }
  // Coarse-grained file timestamps (a jiffy) must tick between two writes
  // for a repeat of the shown value to count as a new write.
  static void letTheClockTick() { std::this_thread::sleep_for(std::chrono::milliseconds(25)); }

  test::TempDir dir_;
};

TEST_F(EmulatedSysfsTreeTest, LaysOutCpusAndPoliciesLikeLinux) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  EXPECT_FALSE(tree.reused());
  const fs::path cpu = sys() / "devices/system/cpu";
  EXPECT_EQ(readFile(cpu / "online"), "0-11\n");
  EXPECT_EQ(readFile(cpu / "present"), "0-11\n");
  EXPECT_EQ(readFile(cpu / "cpu0/online"), "1\n");
  EXPECT_EQ(readFile(cpu / "cpu7/topology/physical_package_id"), "1\n");
  EXPECT_EQ(readFile(cpu / "cpu7/topology/core_id"), "1\n");
  EXPECT_EQ(readFile(cpu / "cpu7/topology/thread_siblings_list"), "7\n");
  EXPECT_EQ(readFile(cpu / "cpu7/topology/core_siblings_list"), "6-11\n");

  EXPECT_TRUE(fs::is_symlink(cpu / "cpu0/cpufreq"));
  EXPECT_EQ(fs::read_symlink(cpu / "cpu0/cpufreq"), fs::path("../cpufreq/policy0"));
  EXPECT_EQ(fs::canonical(cpu / "cpu0/cpufreq"), fs::canonical(policy(0)));
  EXPECT_EQ(fs::canonical(cpu / "cpu11/cpufreq"), fs::canonical(policy(11)));
  EXPECT_EQ(tree.policyIds().size(), 12u);
  EXPECT_EQ(tree.policyIds().back(), 11u);

  const fs::path p0 = cpu / "cpu0/cpufreq";  // through the link, as tools read it
  EXPECT_EQ(readFile(p0 / "affected_cpus"), "0\n");
  EXPECT_EQ(readFile(p0 / "related_cpus"), "0\n");
  EXPECT_EQ(readFile(p0 / "cpuinfo_min_freq"), "1200000\n");
  EXPECT_EQ(readFile(p0 / "cpuinfo_max_freq"), "2600000\n");
  EXPECT_EQ(readFile(p0 / "cpuinfo_transition_latency"), "10000\n");
  EXPECT_EQ(readFile(p0 / "scaling_available_frequencies"),
            "1200000 1300000 1400000 1500000 1600000 1700000 1800000 1900000 2000000 2100000 2200000 2300000 "
            "2400000 2500000 2600000 \n");
  EXPECT_EQ(readFile(p0 / "scaling_available_governors"),
            "conservative ondemand userspace powersave performance schedutil \n");
  EXPECT_EQ(readFile(p0 / "scaling_driver"), "acpi-cpufreq\n");
  EXPECT_EQ(readFile(p0 / "scaling_governor"), "ondemand\n");
  EXPECT_EQ(readFile(p0 / "scaling_min_freq"), "1200000\n");
  EXPECT_EQ(readFile(p0 / "scaling_max_freq"), "2600000\n");
  EXPECT_EQ(readFile(p0 / "scaling_cur_freq"), "1200000\n");
  EXPECT_EQ(readFile(p0 / "scaling_setspeed"), "<unsupported>\n");
  EXPECT_FALSE(fs::exists(cpu / "intel_pstate"));
}

TEST_F(EmulatedSysfsTreeTest, EveryFileIsNonEmptyAndEndsInANewline) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(sys())) {
    if (!entry.is_regular_file() || entry.is_symlink()) continue;
    std::string text = readFile(entry.path());
    ASSERT_FALSE(text.empty()) << entry.path();
    EXPECT_EQ(text.back(), '\n') << entry.path();
    ++files;
  }
  EXPECT_GT(files, 300u);
}

TEST_F(EmulatedSysfsTreeTest, IntelPstateHasNoTableAndSharesPoliciesBetweenSiblings) {
  EmulatedSysfsTree tree = openTree(laptopProfile());
  const fs::path cpu = sys() / "devices/system/cpu";
  EXPECT_EQ(readFile(cpu / "intel_pstate/status"), "active\n");
  EXPECT_EQ(readFile(cpu / "intel_pstate/no_turbo"), "0\n");
  EXPECT_EQ(tree.policyIds(), (std::vector<uint32_t>{0, 2, 4, 6}));
  EXPECT_EQ(tree.policyOfCore(3), 6u);
  EXPECT_EQ(fs::canonical(cpu / "cpu3/cpufreq"), fs::canonical(policy(2)));
  EXPECT_FALSE(fs::exists(policy(1)));
  EXPECT_EQ(readFile(policy(2) / "affected_cpus"), "2 3\n");
  EXPECT_EQ(readFile(cpu / "cpu3/topology/thread_siblings_list"), "2-3\n");
  EXPECT_EQ(readFile(cpu / "cpu3/topology/core_id"), "1\n");
  EXPECT_FALSE(fs::exists(policy(0) / "scaling_available_frequencies"));
  EXPECT_EQ(readFile(policy(0) / "scaling_available_governors"), "performance powersave\n");
  EXPECT_EQ(readFile(policy(0) / "scaling_driver"), "intel_pstate\n");
  EXPECT_EQ(readFile(policy(0) / "scaling_governor"), "powersave\n");
  EXPECT_EQ(readFile(policy(0) / "cpuinfo_min_freq"), "800000\n");
}

TEST_F(EmulatedSysfsTreeTest, LaysOutPowercapWithClassLinks) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  EXPECT_EQ(fs::read_symlink(sys() / "class/powercap/intel-rapl:1"),
            fs::path("../../devices/virtual/powercap/intel-rapl/intel-rapl:1"));
  EXPECT_EQ(fs::read_symlink(sys() / "class/powercap/intel-rapl"),
            fs::path("../../devices/virtual/powercap/intel-rapl"));
  const fs::path zone = sys() / "class/powercap/intel-rapl:1";
  EXPECT_EQ(readFile(zone / "name"), "package-1\n");
  EXPECT_EQ(readFile(zone / "energy_uj"), "0\n");
  EXPECT_EQ(readFile(zone / "max_energy_range_uj"), "65532610987\n");
  EXPECT_EQ(readFile(zone / "constraint_0_name"), "long_term\n");
  EXPECT_EQ(readFile(zone / "constraint_0_power_limit_uw"), "95000000\n");
  EXPECT_EQ(readFile(zone / "constraint_0_max_power_uw"), "95000000\n");
  EXPECT_EQ(readFile(zone / "constraint_0_time_window_us"), "999424\n");
  EXPECT_EQ(readFile(zone / "enabled"), "1\n");
  EXPECT_EQ(readFile(sys() / "class/powercap/intel-rapl/intel-rapl:0/name"), "package-0\n");
  EXPECT_FALSE(fs::exists(sys() / "class/powercap/intel-rapl:2"));
}

TEST_F(EmulatedSysfsTreeTest, LaysOutCoretempWithClassLinks) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  EXPECT_EQ(fs::read_symlink(sys() / "class/hwmon/hwmon1"), fs::path("../../devices/platform/coretemp.1/hwmon/hwmon1"));
  const fs::path hwmon = sys() / "class/hwmon/hwmon1";
  EXPECT_EQ(readFile(hwmon / "name"), "coretemp\n");
  EXPECT_EQ(readFile(hwmon / "temp1_label"), "Package id 1\n");
  EXPECT_EQ(readFile(hwmon / "temp1_crit"), "100000\n");
  EXPECT_EQ(readFile(hwmon / "temp1_max"), "80000\n");
  EXPECT_EQ(readFile(hwmon / "temp2_label"), "Core 0\n");
  EXPECT_EQ(readFile(hwmon / "temp7_label"), "Core 5\n");
  EXPECT_EQ(readFile(hwmon / "temp7_input"), "25000\n");
  EXPECT_EQ(readFile(hwmon / "temp7_crit"), "100000\n");
  EXPECT_FALSE(fs::exists(hwmon / "temp8_label"));

  tree.writeCoreTemperature(1, 5, 61.25);
  tree.writePackageTemperature(1, 63.5);
  EXPECT_EQ(readFile(hwmon / "temp7_input"), "61250\n");
  EXPECT_EQ(readFile(hwmon / "temp1_input"), "63500\n");
  EXPECT_EQ(tree.readCoreTemperature(1, 5).value_or(0), 61.25);
  tree.writeCoreTemperature(1, 5, -3.5);
  EXPECT_EQ(readFile(hwmon / "temp7_input"), "-3500\n");
}

TEST_F(EmulatedSysfsTreeTest, OutputsAreRewrittenInPlace) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  const fs::path energy = sys() / "class/powercap/intel-rapl:0/energy_uj";
  // A reader that keeps its descriptor, as one may on real sysfs.
  int fd = ::open(energy.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto pread_all = [fd] {
    char buffer[64];
    ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
    return std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  };
  tree.writeEnergy(0, 123456789);
  EXPECT_EQ(pread_all(), "123456789\n");
  tree.writeEnergy(0, 4321);  // shorter: the tail must go
  EXPECT_EQ(pread_all(), "4321\n");
  EXPECT_EQ(tree.readEnergyUj(0), 4321u);
  ::close(fd);

  tree.writeCurrentFrequency(3, 2300000);
  EXPECT_EQ(readFile(policy(3) / "scaling_cur_freq"), "2300000\n");
  tree.writeCurrentFrequency(99, 2300000);  // no such policy: ignored
}

TEST_F(EmulatedSysfsTreeTest, GarbageAndOutOfRangeLimitsAreSanitised) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  ASSERT_TRUE(writeControl(policy(1) / "scaling_max_freq", "2000000\n"));
  EXPECT_EQ(tree.readControls(1).max_khz, 2000000u);

  ASSERT_TRUE(writeControl(policy(1) / "scaling_max_freq", "abc\n"));
  EXPECT_EQ(tree.readControls(1).max_khz, 2000000u);
  EXPECT_EQ(readFile(policy(1) / "scaling_max_freq"), "2000000\n");

  ASSERT_TRUE(writeControl(policy(1) / "scaling_max_freq", "99999999999999999999999\n"));  // beyond %u
  EXPECT_EQ(tree.readControls(1).max_khz, 2000000u);
  EXPECT_EQ(readFile(policy(1) / "scaling_max_freq"), "2000000\n");

  ASSERT_TRUE(writeControl(policy(1) / "scaling_max_freq", "9999999\n"));
  EXPECT_EQ(tree.readControls(1).max_khz, 2600000u);  // clamped to cpuinfo_max_freq
  EXPECT_EQ(readFile(policy(1) / "scaling_max_freq"), "2600000\n");

  ASSERT_TRUE(writeControl(policy(1) / "scaling_min_freq", "100"));
  EXPECT_EQ(tree.readControls(1).min_khz, 1200000u);
  EXPECT_EQ(readFile(policy(1) / "scaling_min_freq"), "1200000\n");

  ASSERT_TRUE(writeControl(policy(1) / "scaling_min_freq", "1500000"));  // no newline: still fine
  EXPECT_EQ(tree.readControls(1).min_khz, 1500000u);
  EXPECT_EQ(readFile(policy(1) / "scaling_min_freq"), "1500000\n");
  // Other policies are untouched.
  EXPECT_EQ(tree.readControls(2).min_khz, 1200000u);
}

TEST_F(EmulatedSysfsTreeTest, MinAboveMaxShowsMaxButKeepsTheRequest) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", "2000000\n"));
  ASSERT_TRUE(writeControl(policy(0) / "scaling_min_freq", "2400000\n"));
  EmulatedPolicyControls c = tree.readControls(0);
  EXPECT_EQ(c.min_khz, 2000000u);
  EXPECT_EQ(c.max_khz, 2000000u);
  EXPECT_EQ(readFile(policy(0) / "scaling_min_freq"), "2000000\n");
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", "2600000\n"));
  c = tree.readControls(0);
  EXPECT_EQ(c.min_khz, 2400000u);
  EXPECT_EQ(c.max_khz, 2600000u);

  // Writing the value shown is a request too.
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", "2000000\n"));
  (void)tree.readControls(0);
  letTheClockTick();
  ASSERT_TRUE(writeControl(policy(0) / "scaling_min_freq", "2000000\n"));
  (void)tree.readControls(0);
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", "2600000\n"));
  EXPECT_EQ(tree.readControls(0).min_khz, 2000000u);
}

TEST_F(EmulatedSysfsTreeTest, LimitsAlwaysContainATableEntry) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  ASSERT_TRUE(writeControl(policy(0) / "scaling_min_freq", "2050000\n"));
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", "2050000\n"));
  EmulatedPolicyControls c = tree.readControls(0);
  EXPECT_EQ(c.min_khz, 2050000u);
  EXPECT_EQ(c.max_khz, 2100000u);  // cpufreq_frequency_table_verify() raises max
}

TEST_F(EmulatedSysfsTreeTest, AnEmptyFileGetsOneRoundBeforeItIsRestored) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", "2200000\n"));
  EXPECT_EQ(tree.readControls(0).max_khz, 2200000u);
  ASSERT_TRUE(writeControl(policy(0) / "scaling_max_freq", ""));
  EXPECT_EQ(tree.readControls(0).max_khz, 2200000u);
  EXPECT_EQ(readFile(policy(0) / "scaling_max_freq"), "");  // a writer may be mid-way
  EXPECT_EQ(tree.readControls(0).max_khz, 2200000u);
  EXPECT_EQ(readFile(policy(0) / "scaling_max_freq"), "2200000\n");

  // The normal case: the write lands before the second look.
  ASSERT_TRUE(writeControl(policy(0) / "scaling_governor", ""));
  EXPECT_EQ(tree.readControls(0).governor, "ondemand");
  ASSERT_TRUE(writeControl(policy(0) / "scaling_governor", "performance\n"));
  EXPECT_EQ(tree.readControls(0).governor, "performance");
  EXPECT_EQ(readFile(policy(0) / "scaling_governor"), "performance\n");
}

TEST_F(EmulatedSysfsTreeTest, UnknownGovernorIsRefused) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  ASSERT_TRUE(writeControl(policy(4) / "scaling_governor", "performance\n"));
  EXPECT_EQ(tree.readControls(4).governor, "performance");
  ASSERT_TRUE(writeControl(policy(4) / "scaling_governor", "turbo\n"));
  EXPECT_EQ(tree.readControls(4).governor, "performance");
  EXPECT_EQ(readFile(policy(4) / "scaling_governor"), "performance\n");
}

TEST_F(EmulatedSysfsTreeTest, IntelPstateRefusesGovernorsItDoesNotHave) {
  EmulatedSysfsTree tree = openTree(laptopProfile());
  ASSERT_TRUE(writeControl(policy(2) / "scaling_governor", "userspace\n"));
  EXPECT_EQ(tree.readControls(2).governor, "powersave");
  EXPECT_EQ(readFile(policy(2) / "scaling_governor"), "powersave\n");
  ASSERT_TRUE(writeControl(policy(2) / "scaling_max_freq", "2000000\n"));
  EXPECT_EQ(tree.readControls(2).max_khz, 2000000u);
  EXPECT_EQ(tree.readControls(1).governor, "");  // policy1 does not exist (cpu1 is in policy0)
}

TEST_F(EmulatedSysfsTreeTest, UserspaceGovernorDrivesSetspeed) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  tree.writeCurrentFrequency(5, 1800000);
  ASSERT_TRUE(writeControl(policy(5) / "scaling_setspeed", "2000000\n"));  // refused: not userspace
  EXPECT_FALSE(tree.readControls(5).setspeed_khz.has_value());
  EXPECT_EQ(readFile(policy(5) / "scaling_setspeed"), "<unsupported>\n");

  ASSERT_TRUE(writeControl(policy(5) / "scaling_governor", "userspace\n"));
  EmulatedPolicyControls c = tree.readControls(5);
  EXPECT_EQ(c.governor, "userspace");
  EXPECT_EQ(c.setspeed_khz.value_or(0), 1800000u);  // starts where the policy runs
  EXPECT_EQ(readFile(policy(5) / "scaling_setspeed"), "1800000\n");

  ASSERT_TRUE(writeControl(policy(5) / "scaling_setspeed", "2100000\n"));
  EXPECT_EQ(tree.readControls(5).setspeed_khz.value_or(0), 2100000u);
  ASSERT_TRUE(writeControl(policy(5) / "scaling_setspeed", "2150000\n"));
  EXPECT_EQ(tree.readControls(5).setspeed_khz.value_or(0), 2200000u);
  EXPECT_EQ(readFile(policy(5) / "scaling_setspeed"), "2200000\n");
  ASSERT_TRUE(writeControl(policy(5) / "scaling_setspeed", "garbage\n"));
  EXPECT_EQ(tree.readControls(5).setspeed_khz.value_or(0), 2200000u);
  EXPECT_EQ(readFile(policy(5) / "scaling_setspeed"), "2200000\n");

  ASSERT_TRUE(writeControl(policy(5) / "scaling_max_freq", "2000000\n"));
  EXPECT_EQ(tree.readControls(5).setspeed_khz.value_or(0), 2000000u);
  ASSERT_TRUE(writeControl(policy(5) / "scaling_max_freq", "2600000\n"));
  EXPECT_EQ(tree.readControls(5).setspeed_khz.value_or(0), 2200000u);  // the request came back

  ASSERT_TRUE(writeControl(policy(5) / "scaling_governor", "ondemand\n"));
  c = tree.readControls(5);
  EXPECT_FALSE(c.setspeed_khz.has_value());
  EXPECT_EQ(readFile(policy(5) / "scaling_setspeed"), "<unsupported>\n");
}

TEST_F(EmulatedSysfsTreeTest, GovernorAndSetspeedWrittenTogetherBothCount) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  ASSERT_TRUE(writeControl(policy(0) / "scaling_governor", "userspace\n"));
  ASSERT_TRUE(writeControl(policy(0) / "scaling_setspeed", "2500000\n"));
  EXPECT_EQ(tree.readControls(0).setspeed_khz.value_or(0), 2500000u);
}

TEST_F(EmulatedSysfsTreeTest, ReportsWhichControlsWereWritten) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  if (!tree.watchingControls()) GTEST_SKIP() << "no inotify here";
  (void)tree.takeControlChanges();  // whatever open() itself did
  EXPECT_TRUE(tree.takeControlChanges().policies.empty());
  // Outputs are not controls: writing them reports nothing.
  tree.writeCurrentFrequency(2, 2000000);
  tree.writeEnergy(0, 42);
  EmulatedControlChanges none = tree.takeControlChanges();
  EXPECT_TRUE(none.policies.empty());
  EXPECT_TRUE(none.packages.empty());
  EXPECT_FALSE(none.everything);

  ASSERT_TRUE(writeControl(policy(7) / "scaling_max_freq", "2000000\n"));
  ASSERT_TRUE(writeControl(policy(7) / "scaling_governor", "powersave\n"));
  ASSERT_TRUE(writeControl(policy(9) / "scaling_setspeed", "1\n"));
  ASSERT_TRUE(writeControl(sys() / "class/powercap/intel-rapl:1/constraint_0_power_limit_uw", "1\n"));
  EmulatedControlChanges changes = tree.takeControlChanges();
  std::sort(changes.policies.begin(), changes.policies.end());
  EXPECT_EQ(changes.policies, (std::vector<uint32_t>{7, 9}));
  EXPECT_EQ(changes.packages, (std::vector<uint32_t>{1}));
  EXPECT_TRUE(tree.takeControlChanges().policies.empty());
}

TEST_F(EmulatedSysfsTreeTest, PowerLimitIsReadAndSanitised) {
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  const fs::path zone = sys() / "class/powercap/intel-rapl:0";
  EXPECT_EQ(tree.readPowerLimitUw(0).value_or(0), 95000000u);
  ASSERT_TRUE(writeControl(zone / "constraint_0_power_limit_uw", "50000000\n"));
  EXPECT_EQ(tree.readPowerLimitUw(0).value_or(0), 50000000u);
  ASSERT_TRUE(writeControl(zone / "constraint_0_power_limit_uw", "fifty\n"));
  EXPECT_EQ(tree.readPowerLimitUw(0).value_or(0), 50000000u);
  EXPECT_EQ(readFile(zone / "constraint_0_power_limit_uw"), "50000000\n");
  ASSERT_TRUE(writeControl(zone / "enabled", "0\n"));
  EXPECT_FALSE(tree.readPowerLimitUw(0).has_value());
  ASSERT_TRUE(writeControl(zone / "enabled", "1\n"));
  EXPECT_EQ(tree.readPowerLimitUw(0).value_or(0), 50000000u);
  EXPECT_EQ(tree.readPowerLimitUw(1).value_or(0), 95000000u);
  EXPECT_FALSE(tree.readPowerLimitUw(2).has_value());
}

TEST_F(EmulatedSysfsTreeTest, ReopeningKeepsControlsAndOutputs) {
  {
    EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
    ASSERT_TRUE(writeControl(policy(3) / "scaling_governor", "userspace\n"));
    ASSERT_TRUE(writeControl(policy(3) / "scaling_setspeed", "1700000\n"));
    ASSERT_TRUE(writeControl(policy(3) / "scaling_max_freq", "2400000\n"));
    (void)tree.readControls(3);
    tree.writeEnergy(1, 777777);
    tree.writeCurrentFrequency(3, 1700000);
  }
  EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
  EXPECT_TRUE(tree.reused());
  EXPECT_EQ(readFile(policy(3) / "scaling_governor"), "userspace\n");
  EXPECT_EQ(readFile(policy(3) / "scaling_max_freq"), "2400000\n");
  EmulatedPolicyControls c = tree.readControls(3);
  EXPECT_EQ(c.governor, "userspace");
  EXPECT_EQ(c.max_khz, 2400000u);
  EXPECT_EQ(c.setspeed_khz.value_or(0), 1700000u);
  EXPECT_EQ(tree.readEnergyUj(1), 777777u);
  EXPECT_EQ(readFile(policy(3) / "scaling_cur_freq"), "1700000\n");
}

TEST_F(EmulatedSysfsTreeTest, ADifferentProfileGetsAFreshTree) {
  {
    EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630());
    ASSERT_TRUE(writeControl(policy(3) / "scaling_governor", "performance\n"));
  }
  NodeProfile smaller = NodeProfile::xeonE5_2630();
  smaller.cores_per_package = 4;
  EmulatedSysfsTree tree = openTree(smaller);
  EXPECT_FALSE(tree.reused());
  EXPECT_EQ(readFile(policy(3) / "scaling_governor"), "ondemand\n");
  EXPECT_TRUE(fs::exists(policy(7)));
  EXPECT_FALSE(fs::exists(policy(8)));
  EXPECT_EQ(readFile(sys() / "devices/system/cpu/online"), "0-7\n");
  EXPECT_FALSE(fs::exists(dir_.path() / ".sys.old"));
  EXPECT_FALSE(fs::exists(dir_.path() / ".sys.new"));
}

TEST_F(EmulatedSysfsTreeTest, RefusesToReplaceADirectoryThatIsNotOurs) {
  fs::create_directories(sys() / "devices");
  std::ofstream(sys() / "devices/precious") << "keep me\n";
  auto tree = EmulatedSysfsTree::open(dir_.path(), NodeProfile::xeonE5_2630());
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(readFile(sys() / "devices/precious"), "keep me\n");
}

// The daemon reads its controls back from the tree as root: a kept tree
// with anything other users could write (or made by one) is not used.
TEST_F(EmulatedSysfsTreeTest, RefusesToKeepATreeOthersCanWrite) {
  { EmulatedSysfsTree tree = openTree(NodeProfile::xeonE5_2630()); }
  fs::permissions(policy(3) / "scaling_max_freq", fs::perms::others_write, fs::perm_options::add);
  auto tree = EmulatedSysfsTree::open(dir_.path(), NodeProfile::xeonE5_2630());
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(tree.error().message.find("emulated node tree: "), std::string::npos) << tree.error().message;
  EXPECT_NE(tree.error().message.find("scaling_max_freq is writable by other users"), std::string::npos)
      << tree.error().message;

  fs::permissions(policy(3) / "scaling_max_freq", fs::perms::others_write, fs::perm_options::remove);
  EXPECT_TRUE(EmulatedSysfsTree::open(dir_.path(), NodeProfile::xeonE5_2630()).ok());
  fs::permissions(dir_.path(), fs::perms::all);
  auto open_root = EmulatedSysfsTree::open(dir_.path(), NodeProfile::xeonE5_2630());
  ASSERT_FALSE(open_root.ok());
  EXPECT_EQ(open_root.error().code, ErrorCode::kPermissionDenied);
  fs::permissions(dir_.path(), fs::perms::owner_all);
}

TEST_F(EmulatedSysfsTreeTest, RefusesAnInvalidProfile) {
  NodeProfile bad = NodeProfile::xeonE5_2630();
  bad.packages = 0;
  auto tree = EmulatedSysfsTree::open(dir_.path(), bad);
  EXPECT_FALSE(tree.ok());
  EXPECT_FALSE(fs::exists(sys()));
}

}  // namespace
}  // namespace nk
