#include "platform/hwmon_thermal.h"

#include <gtest/gtest.h>

#include "fake_sysfs.h"

namespace nk {
namespace {

using test::FakeSysfs;
using Kind = TemperatureReading::Kind;

// The kernel's layout: class/hwmon/hwmonN is a link to the coretemp.P
// platform device's hwmon directory, which links back with `device`.
std::string addCoretemp(const FakeSysfs& fs, uint32_t hwmon, uint32_t device, bool package_label,
                        const std::vector<std::pair<uint32_t, int64_t>>& cores, int64_t package_mc) {
  const std::string device_dir = "sys/devices/platform/coretemp." + std::to_string(device);
  const std::string dir = device_dir + "/hwmon/hwmon" + std::to_string(hwmon) + "/";
  fs.write(dir + "name", "coretemp\n");
  uint32_t k = 1;
  if (package_label) {
    fs.write(dir + "temp1_label", "Package id " + std::to_string(device) + "\n");
    fs.write(dir + "temp1_input", std::to_string(package_mc) + "\n");
    fs.write(dir + "temp1_crit", "100000\n");
  }
  for (auto [core, mc] : cores) {
    k = core + 2;
    fs.write(dir + "temp" + std::to_string(k) + "_label", "Core " + std::to_string(core) + "\n");
    fs.write(dir + "temp" + std::to_string(k) + "_input", std::to_string(mc) + "\n");
  }
  fs.symlink("../../../coretemp." + std::to_string(device), dir + "device");
  fs.symlink("../../" + dir.substr(4), "sys/class/hwmon/hwmon" + std::to_string(hwmon));
  return dir;
}

TEST(HwmonThermal, ReadsTwoPackagesThroughSymlinks) {
  FakeSysfs fs;
  // Non-coretemp chips come first, as acpitz usually does.
  fs.write("sys/class/hwmon/hwmon0/name", "acpitz\n");
  fs.write("sys/class/hwmon/hwmon0/temp1_input", "27800\n");
  fs.write("sys/class/hwmon/hwmon0/temp1_label", "Core 0\n");
  addCoretemp(fs, 10, 1, true, {{0, 51000}, {1, 52000}}, 55000);
  addCoretemp(fs, 2, 0, true, {{0, 41000}, {1, 42500}, {4, 44000}}, 45000);

  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_TRUE(readings.ok()) << readings.error().message;
  ASSERT_EQ(readings->size(), 7u);

  const auto& r = *readings;
  EXPECT_EQ(r[0].kind, Kind::kPackage);
  EXPECT_EQ(r[0].package, 0u);
  EXPECT_DOUBLE_EQ(r[0].celsius, 45.0);
  EXPECT_EQ(r[0].label, "Package id 0");
  EXPECT_EQ(r[1].kind, Kind::kCore);
  EXPECT_EQ(r[1].package, 0u);
  EXPECT_EQ(r[1].core_id, 0u);
  EXPECT_DOUBLE_EQ(r[1].celsius, 41.0);
  EXPECT_EQ(r[2].core_id, 1u);
  EXPECT_DOUBLE_EQ(r[2].celsius, 42.5);
  EXPECT_EQ(r[3].core_id, 4u);
  EXPECT_EQ(r[3].label, "Core 4");
  EXPECT_EQ(r[4].kind, Kind::kPackage);
  EXPECT_EQ(r[4].package, 1u);
  EXPECT_DOUBLE_EQ(r[4].celsius, 55.0);
  EXPECT_EQ(r[5].package, 1u);
  EXPECT_EQ(r[5].core_id, 0u);
  EXPECT_DOUBLE_EQ(r[5].celsius, 51.0);
  EXPECT_EQ(r[6].package, 1u);
  EXPECT_EQ(r[6].core_id, 1u);
}

TEST(HwmonThermal, PackageFromTheLabelWinsOverTheDevice) {
  FakeSysfs fs;
  std::string dir = addCoretemp(fs, 0, 0, true, {{0, 30000}}, 31000);
  fs.write(dir + "temp1_label", "Package id 3\n");
  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_TRUE(readings.ok()) << readings.error().message;
  ASSERT_EQ(readings->size(), 2u);
  EXPECT_EQ((*readings)[0].package, 3u);
  EXPECT_EQ((*readings)[1].package, 3u);
}

TEST(HwmonThermal, PackageFromTheDeviceWithoutPackageLabel) {
  FakeSysfs fs;
  addCoretemp(fs, 0, 1, false, {{2, 30000}}, 0);
  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_TRUE(readings.ok()) << readings.error().message;
  ASSERT_EQ(readings->size(), 1u);
  EXPECT_EQ((*readings)[0].kind, Kind::kCore);
  EXPECT_EQ((*readings)[0].package, 1u);
  EXPECT_EQ((*readings)[0].core_id, 2u);
}

TEST(HwmonThermal, PlainDirectoriesUseChipOrder) {
  FakeSysfs fs;
  for (uint32_t n : {0u, 1u}) {
    const std::string dir = "sys/class/hwmon/hwmon" + std::to_string(n) + "/";
    fs.write(dir + "device/name", "coretemp\n");  // pre-3.x layout: name under device/
    fs.write(dir + "temp2_label", "Core 0\n");
    fs.write(dir + "temp2_input", std::to_string(40000 + n * 1000) + "\n");
  }
  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_TRUE(readings.ok()) << readings.error().message;
  ASSERT_EQ(readings->size(), 2u);
  EXPECT_EQ((*readings)[0].package, 0u);
  EXPECT_DOUBLE_EQ((*readings)[0].celsius, 40.0);
  EXPECT_EQ((*readings)[1].package, 1u);
  EXPECT_DOUBLE_EQ((*readings)[1].celsius, 41.0);
}

TEST(HwmonThermal, SkipsUnreadableInputs) {
  FakeSysfs fs;
  std::string dir = addCoretemp(fs, 0, 0, true, {{0, 30000}, {1, 31000}, {2, 32000}}, 35000);
  fs.remove(dir + "temp3_input");            // Core 1 vanished
  fs.write(dir + "temp4_input", "hot\n");    // Core 2 holds garbage
  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_TRUE(readings.ok()) << readings.error().message;
  ASSERT_EQ(readings->size(), 2u);
  EXPECT_EQ((*readings)[0].kind, Kind::kPackage);
  EXPECT_EQ((*readings)[1].core_id, 0u);
}

TEST(HwmonThermal, ReportsWhenNothingCouldBeRead) {
  FakeSysfs fs;
  std::string dir = addCoretemp(fs, 0, 0, true, {{0, 30000}}, 35000);
  fs.remove(dir + "temp1_input");
  fs.write(dir + "temp2_input", "\n");
  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_FALSE(readings.ok());
  EXPECT_EQ(readings.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(readings.error().message.find("temp1_input: No such file or directory"), std::string::npos)
      << readings.error().message;
  EXPECT_NE(readings.error().message.find("1 more"), std::string::npos) << readings.error().message;
}

TEST(HwmonThermal, NoCoretempIsAnError) {
  FakeSysfs fs;
  fs.write("sys/class/hwmon/hwmon0/name", "nvme\n");
  HwmonThermal thermal(fs.root());
  auto readings = thermal.read();
  ASSERT_FALSE(readings.ok());
  EXPECT_NE(readings.error().message.find("no coretemp"), std::string::npos);

  FakeSysfs empty;
  auto none = HwmonThermal(empty.root()).read();
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace nk
