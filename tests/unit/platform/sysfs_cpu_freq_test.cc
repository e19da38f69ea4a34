#include "platform/sysfs_cpu_freq.h"

#include <gtest/gtest.h>

#include "fake_sysfs.h"

namespace nk {
namespace {

using test::FakeSysfs;

const std::string kCpufreq = "sys/devices/system/cpu/cpufreq/";

std::string policyFile(uint32_t policy, const std::string& file) {
  return kCpufreq + "policy" + std::to_string(policy) + "/" + file;
}

// acpi-cpufreq under the userspace governor, as a Haswell server shows it.
void addAcpiPolicy(const FakeSysfs& fs, uint32_t policy, const std::string& cpus) {
  auto f = [&](const std::string& file, const std::string& content) { fs.write(policyFile(policy, file), content); };
  f("affected_cpus", cpus + "\n");
  f("scaling_driver", "acpi-cpufreq\n");
  f("scaling_governor", "userspace\n");
  f("scaling_available_governors", "conservative ondemand userspace powersave performance schedutil \n");
  f("scaling_cur_freq", "2400000\n");
  f("scaling_min_freq", "1200000\n");
  f("scaling_max_freq", "3000000\n");
  f("cpuinfo_min_freq", "1200000\n");
  f("cpuinfo_max_freq", "3000000\n");
  f("scaling_setspeed", "2400000\n");
  f("scaling_available_frequencies", "3000000 2400000 1800000 1200000 \n");
}

// intel_pstate in active mode: no table, no userspace governor.
void addIntelPstatePolicy(const FakeSysfs& fs, uint32_t policy, bool with_setspeed_file) {
  auto f = [&](const std::string& file, const std::string& content) { fs.write(policyFile(policy, file), content); };
  f("affected_cpus", std::to_string(policy) + "\n");
  f("scaling_driver", "intel_pstate\n");
  f("scaling_governor", "powersave\n");
  f("scaling_available_governors", "performance powersave\n");
  f("scaling_cur_freq", "3199872\n");
  f("scaling_min_freq", "800000\n");
  f("scaling_max_freq", "4700000\n");
  f("cpuinfo_min_freq", "800000\n");
  f("cpuinfo_max_freq", "4700000\n");
  if (with_setspeed_file) f("scaling_setspeed", "<unsupported>\n");
}

TEST(SysfsCpuFreq, ListsPoliciesNumerically) {
  FakeSysfs fs;
  for (uint32_t p : {10u, 0u, 2u}) addAcpiPolicy(fs, p, std::to_string(p));
  fs.mkdir(kCpufreq + "ondemand");  // governor tunables live next to the policies
  SysfsCpuFreq cpufreq(fs.root());
  auto ids = cpufreq.policyIds();
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_EQ(*ids, (std::vector<uint32_t>{0, 2, 10}));
}

TEST(SysfsCpuFreq, NoCpufreqDirectoryIsAClearError) {
  FakeSysfs fs;
  SysfsCpuFreq cpufreq(fs.root());
  auto ids = cpufreq.policyIds();
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(ids.error().message.find(fs.path(kCpufreq).parent_path().string()), std::string::npos)
      << ids.error().message;
  EXPECT_NE(ids.error().message.find("No such file or directory"), std::string::npos);
}

TEST(SysfsCpuFreq, ReadsAcpiCpufreqUnderUserspace) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 0, "0 1");
  SysfsCpuFreq cpufreq(fs.root());
  auto p = cpufreq.readPolicy(0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->id, 0u);
  EXPECT_EQ(p->affected_cpus, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(p->driver, "acpi-cpufreq");
  EXPECT_EQ(p->governor, "userspace");
  EXPECT_EQ(p->available_governors.size(), 6u);
  EXPECT_EQ(p->available_governors[2], "userspace");
  EXPECT_EQ(p->cur_khz, 2400000u);
  EXPECT_EQ(p->min_khz, 1200000u);
  EXPECT_EQ(p->max_khz, 3000000u);
  EXPECT_EQ(p->cpuinfo_min_khz, 1200000u);
  EXPECT_EQ(p->cpuinfo_max_khz, 3000000u);
  EXPECT_EQ(p->setspeed_khz, std::optional<uint64_t>(2400000));
  EXPECT_EQ(p->available_khz, (std::vector<uint64_t>{1200000, 1800000, 2400000, 3000000}));
  EXPECT_FALSE(p->intel_pstate_active);
}

TEST(SysfsCpuFreq, ReadsIntelPstateActive) {
  for (bool with_setspeed_file : {true, false}) {
    FakeSysfs fs;
    addIntelPstatePolicy(fs, 3, with_setspeed_file);
    fs.write("sys/devices/system/cpu/intel_pstate/status", "active\n");
    SysfsCpuFreq cpufreq(fs.root());
    auto p = cpufreq.readPolicy(3);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_TRUE(p->intel_pstate_active);
    EXPECT_EQ(p->setspeed_khz, std::nullopt) << "setspeed file present: " << with_setspeed_file;
    EXPECT_TRUE(p->available_khz.empty());
    EXPECT_EQ(p->affected_cpus, (std::vector<uint32_t>{3}));
    EXPECT_EQ(p->governor, "powersave");
    EXPECT_EQ(p->cur_khz, 3199872u);
    EXPECT_EQ(p->cpuinfo_max_khz, 4700000u);
  }
}

TEST(SysfsCpuFreq, IntelPstateWithoutStatusFileTrustsTheDriverName) {
  FakeSysfs fs;
  addIntelPstatePolicy(fs, 0, true);
  SysfsCpuFreq cpufreq(fs.root());
  auto p = cpufreq.readPolicy(0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->intel_pstate_active);
}

TEST(SysfsCpuFreq, PassiveIntelPstateIsNotActive) {
  FakeSysfs fs;
  addIntelPstatePolicy(fs, 0, true);
  fs.write(policyFile(0, "scaling_driver"), "intel_cpufreq\n");
  fs.write("sys/devices/system/cpu/intel_pstate/status", "passive\n");
  SysfsCpuFreq cpufreq(fs.root());
  auto p = cpufreq.readPolicy(0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->intel_pstate_active);

  // The status file wins over a driver name that disagrees.
  fs.write(policyFile(0, "scaling_driver"), "intel_pstate\n");
  p = cpufreq.readPolicy(0);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->intel_pstate_active);
}

TEST(SysfsCpuFreq, MissingOptionalFilesAreNotErrors) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 1, "1");
  fs.write(policyFile(1, "scaling_governor"), "schedutil\n");
  fs.write(policyFile(1, "scaling_setspeed"), "<unsupported>\n");
  fs.remove(policyFile(1, "scaling_available_frequencies"));
  fs.remove(policyFile(1, "scaling_available_governors"));
  fs.remove(policyFile(1, "scaling_driver"));
  SysfsCpuFreq cpufreq(fs.root());
  auto p = cpufreq.readPolicy(1);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->available_khz.empty());
  EXPECT_TRUE(p->available_governors.empty());
  EXPECT_EQ(p->driver, "");
  EXPECT_EQ(p->setspeed_khz, std::nullopt);
  EXPECT_EQ(p->governor, "schedutil");
}

TEST(SysfsCpuFreq, GarbageInCurFreqNamesTheFile) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 0, "0");
  fs.write(policyFile(0, "scaling_cur_freq"), "fast\n");
  SysfsCpuFreq cpufreq(fs.root());
  const std::string expected = fs.path(policyFile(0, "scaling_cur_freq")).string() + ": expected a number, found 'fast'";
  auto p = cpufreq.readPolicy(0);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(p.error().message, expected);
  auto cur = cpufreq.readCurrentKhz(0);
  ASSERT_FALSE(cur.ok());
  EXPECT_EQ(cur.error().message, expected);
}

TEST(SysfsCpuFreq, GarbageInOptionalFilesIsStillAnError) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 0, "0");
  fs.write(policyFile(0, "scaling_available_frequencies"), "3000000 lots\n");
  SysfsCpuFreq cpufreq(fs.root());
  auto p = cpufreq.readPolicy(0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("scaling_available_frequencies: expected a number, found 'lots'"),
            std::string::npos)
      << p.error().message;

  addAcpiPolicy(fs, 0, "0");
  fs.write(policyFile(0, "scaling_setspeed"), "-1\n");
  p = cpufreq.readPolicy(0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("scaling_setspeed"), std::string::npos) << p.error().message;

  addAcpiPolicy(fs, 0, "0");
  fs.write(policyFile(0, "affected_cpus"), "0 x\n");
  p = cpufreq.readPolicy(0);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("affected_cpus: expected a number, found 'x'"), std::string::npos)
      << p.error().message;
}

TEST(SysfsCpuFreq, VanishedFilesAreReported) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 0, "0");
  SysfsCpuFreq cpufreq(fs.root());
  ASSERT_TRUE(cpufreq.readPolicy(0).ok());

  for (const char* required : {"scaling_max_freq", "scaling_governor", "affected_cpus", "cpuinfo_min_freq"}) {
    addAcpiPolicy(fs, 0, "0");
    fs.remove(policyFile(0, required));
    auto p = cpufreq.readPolicy(0);
    ASSERT_FALSE(p.ok()) << required;
    EXPECT_EQ(p.error().message, fs.path(policyFile(0, required)).string() + ": No such file or directory");
  }

  std::filesystem::remove_all(fs.path(kCpufreq + "policy0"));
  auto gone = cpufreq.readPolicy(0);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  auto cur = cpufreq.readCurrentKhz(0);
  ASSERT_FALSE(cur.ok());
  EXPECT_NE(cur.error().message.find("scaling_cur_freq: No such file or directory"), std::string::npos);
}

TEST(SysfsCpuFreq, WritesLandInTheFiles) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 4, "4 5");
  SysfsCpuFreq cpufreq(fs.root());
  ASSERT_TRUE(cpufreq.setMinKhz(4, 1800000).ok());
  ASSERT_TRUE(cpufreq.setMaxKhz(4, 2400000).ok());
  ASSERT_TRUE(cpufreq.setSpeedKhz(4, 1800000).ok());
  ASSERT_TRUE(cpufreq.setGovernor(4, "performance").ok());
  EXPECT_EQ(fs.read(policyFile(4, "scaling_min_freq")), "1800000");
  EXPECT_EQ(fs.read(policyFile(4, "scaling_max_freq")), "2400000");
  EXPECT_EQ(fs.read(policyFile(4, "scaling_setspeed")), "1800000");
  EXPECT_EQ(fs.read(policyFile(4, "scaling_governor")), "performance");

  auto p = cpufreq.readPolicy(4);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->min_khz, 1800000u);
  EXPECT_EQ(p->max_khz, 2400000u);
  EXPECT_EQ(p->setspeed_khz, std::optional<uint64_t>(1800000));
  EXPECT_EQ(p->governor, "performance");
}

TEST(SysfsCpuFreq, RejectsGovernorWithWhitespace) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 0, "0");
  SysfsCpuFreq cpufreq(fs.root());
  for (const char* bad : {"user space", "userspace\n", "\tperformance", ""}) {
    Status status = cpufreq.setGovernor(0, bad);
    ASSERT_FALSE(status.ok()) << "accepted '" << bad << "'";
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(fs.read(policyFile(0, "scaling_governor")), "userspace\n");
}

TEST(SysfsCpuFreq, WriteToAMissingPolicyFails) {
  FakeSysfs fs;
  addAcpiPolicy(fs, 0, "0");
  SysfsCpuFreq cpufreq(fs.root());
  Status status = cpufreq.setMaxKhz(7, 2000000);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().message, fs.path(policyFile(7, "scaling_max_freq")).string() + ": No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(fs.path(policyFile(7, "scaling_max_freq"))));
}

}  // namespace
}  // namespace nk
