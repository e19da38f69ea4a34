#include "platform/sysfs_rapl.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include <gtest/gtest.h>

#include "fake_sysfs.h"

namespace nk {
namespace {

using test::FakeSysfs;

const std::string kPowercap = "sys/class/powercap/";

void addZone(const FakeSysfs& fs, const std::string& zone, const std::string& name, uint64_t energy,
             bool with_limit = true) {
  const std::string dir = kPowercap + zone + "/";
  fs.write(dir + "name", name + "\n");
  fs.write(dir + "energy_uj", std::to_string(energy) + "\n");
  fs.write(dir + "max_energy_range_uj", "262143328850\n");
  if (with_limit) fs.write(dir + "constraint_0_power_limit_uw", "125000000\n");
  fs.write(dir + "enabled", "1\n");
}

// Real hosts: class/powercap/intel-rapl:N are links into devices/virtual.
void addLinkedZone(const FakeSysfs& fs, const std::string& zone, const std::string& name, uint64_t energy) {
  const std::string real = "sys/devices/virtual/powercap/intel-rapl/" + zone;
  const std::string dir = real + "/";
  fs.write(dir + "name", name + "\n");
  fs.write(dir + "energy_uj", std::to_string(energy) + "\n");
  fs.write(dir + "max_energy_range_uj", "65532610987\n");
  fs.write(dir + "enabled", "0\n");
  fs.symlink("../../devices/virtual/powercap/intel-rapl/" + zone, kPowercap + zone);
}

TEST(SysfsRapl, ListsTopLevelZonesOnly) {
  FakeSysfs fs;
  addZone(fs, "intel-rapl:1", "package-1", 2000);
  addZone(fs, "intel-rapl:0", "package-0", 1000);
  addZone(fs, "intel-rapl:0:0", "core", 500);
  addZone(fs, "intel-rapl:0:1", "dram", 300);
  addZone(fs, "intel-rapl-mmio:0", "package-0", 999);
  fs.mkdir(kPowercap + "intel-rapl");  // the control type, not a zone
  addLinkedZone(fs, "intel-rapl:10", "psys", 77);

  SysfsRapl rapl(fs.root());
  auto zones = rapl.readZones();
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  ASSERT_EQ(zones->size(), 3u);
  EXPECT_EQ((*zones)[0].index, 0u);
  EXPECT_EQ((*zones)[0].name, "package-0");
  EXPECT_EQ((*zones)[0].energy_uj, 1000u);
  EXPECT_EQ((*zones)[0].max_energy_range_uj, 262143328850u);
  EXPECT_EQ((*zones)[0].power_limit_uw, std::optional<uint64_t>(125000000));
  EXPECT_TRUE((*zones)[0].enabled);
  EXPECT_EQ((*zones)[1].index, 1u);
  EXPECT_EQ((*zones)[1].name, "package-1");
  EXPECT_EQ((*zones)[1].energy_uj, 2000u);
  EXPECT_EQ((*zones)[2].index, 10u);
  EXPECT_EQ((*zones)[2].name, "psys");
  EXPECT_EQ((*zones)[2].power_limit_uw, std::nullopt);
  EXPECT_EQ((*zones)[2].max_energy_range_uj, 65532610987u);
  EXPECT_FALSE((*zones)[2].enabled);
}

TEST(SysfsRapl, ReadsEnergyOfOneZone) {
  FakeSysfs fs;
  addZone(fs, "intel-rapl:0", "package-0", 123456789);
  SysfsRapl rapl(fs.root());
  auto energy = rapl.readEnergyUj(0);
  ASSERT_TRUE(energy.ok()) << energy.error().message;
  EXPECT_EQ(*energy, 123456789u);
  auto missing = rapl.readEnergyUj(1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            fs.path(kPowercap + "intel-rapl:1/energy_uj").string() + ": No such file or directory");
}

TEST(SysfsRapl, GarbageAndVanishedFilesAreErrors) {
  FakeSysfs fs;
  addZone(fs, "intel-rapl:0", "package-0", 1);
  fs.write(kPowercap + "intel-rapl:0/max_energy_range_uj", "big\n");
  SysfsRapl rapl(fs.root());
  auto zones = rapl.readZones();
  ASSERT_FALSE(zones.ok());
  EXPECT_EQ(zones.error().message,
            fs.path(kPowercap + "intel-rapl:0/max_energy_range_uj").string() + ": expected a number, found 'big'");

  addZone(fs, "intel-rapl:0", "package-0", 1);
  fs.write(kPowercap + "intel-rapl:0/constraint_0_power_limit_uw", "\n");
  zones = rapl.readZones();
  ASSERT_FALSE(zones.ok());
  EXPECT_NE(zones.error().message.find("constraint_0_power_limit_uw"), std::string::npos);

  addZone(fs, "intel-rapl:0", "package-0", 1);
  fs.remove(kPowercap + "intel-rapl:0/energy_uj");
  zones = rapl.readZones();
  ASSERT_FALSE(zones.ok());
  EXPECT_EQ(zones.error().message,
            fs.path(kPowercap + "intel-rapl:0/energy_uj").string() + ": No such file or directory");
}

TEST(SysfsRapl, NoPowercapIsAClearError) {
  FakeSysfs fs;
  SysfsRapl rapl(fs.root());
  auto zones = rapl.readZones();
  ASSERT_FALSE(zones.ok());
  EXPECT_EQ(zones.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(zones.error().message.find("intel_rapl"), std::string::npos) << zones.error().message;
}

TEST(SysfsRapl, EnergyReadableByRootOnlyIsExplained) {
  FakeSysfs fs;
  addZone(fs, "intel-rapl:0", "package-0", 1);
  // What the kernel does since CVE-2020-8694.
  ::chmod(fs.path(kPowercap + "intel-rapl:0/energy_uj").c_str(), 0400);
  SysfsRapl rapl(fs.root());
  const std::string expected = fs.path(kPowercap + "intel-rapl:0/energy_uj").string() +
                               ": Permission denied (RAPL energy is readable by root only)";
  EXPECT_EXIT(test::runUnprivileged([&] {
                auto energy = rapl.readEnergyUj(0);
                auto zones = rapl.readZones();
                if (energy.ok() || zones.ok()) return false;
                std::cerr << energy.error().message << "\n" << zones.error().message;
                return energy.error().code == ErrorCode::kPermissionDenied && energy.error().message == expected &&
                       zones.error().message == expected;
              }),
              testing::ExitedWithCode(0), "");
}

TEST(SysfsRapl, WritesLandInTheFiles) {
  FakeSysfs fs;
  addZone(fs, "intel-rapl:0", "package-0", 1);
  addZone(fs, "intel-rapl:1", "package-1", 1);
  SysfsRapl rapl(fs.root());
  ASSERT_TRUE(rapl.setPowerLimitUw(1, 95000000).ok());
  ASSERT_TRUE(rapl.setEnabled(1, false).ok());
  EXPECT_EQ(fs.read(kPowercap + "intel-rapl:1/constraint_0_power_limit_uw"), "95000000");
  EXPECT_EQ(fs.read(kPowercap + "intel-rapl:1/enabled"), "0");
  EXPECT_EQ(fs.read(kPowercap + "intel-rapl:0/constraint_0_power_limit_uw"), "125000000\n");
  ASSERT_TRUE(rapl.setEnabled(1, true).ok());
  EXPECT_EQ(fs.read(kPowercap + "intel-rapl:1/enabled"), "1");

  auto zones = rapl.readZones();
  ASSERT_TRUE(zones.ok()) << zones.error().message;
  EXPECT_EQ((*zones)[1].power_limit_uw, std::optional<uint64_t>(95000000));

  Status status = rapl.setPowerLimitUw(5, 1);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("intel-rapl:5/constraint_0_power_limit_uw"), std::string::npos);
}

}  // namespace
}  // namespace nk
