#include "platform/host_cpu_load.h"

#include <gtest/gtest.h>

#include "fake_sysfs.h"

namespace nk {
namespace {

using test::FakeSysfs;

//                         user nice system idle iowait irq softirq steal guest guest_nice
const char* kFirst =
    "cpu  300 0 100 1500 100 0 0 0 0 0\n"
    "cpu0 100 0 50 800 50 0 0 0 0 0\n"
    "cpu1 200 0 50 700 50 0 0 0 50 0\n"
    "intr 12345 1 2 3\n"
    "ctxt 999\n";
// cpu0: +300 user, +100 idle, +100 iowait -> busy 300 of 500.
// cpu1: +50 system, +10 irq, +40 steal, +900 idle; guest +100 (inside user,
// which does not move here, so it must not count) -> busy 100 of 1000.
const char* kSecond =
    "cpu  650 0 150 2500 150 10 0 40 100 0\n"
    "cpu0 400 0 50 900 150 0 0 0 0 0\n"
    "cpu1 200 0 100 1600 50 10 0 40 150 0\n"
    "intr 12350 1 2 3\n";

TEST(HostCpuLoad, FirstSampleIsZero) {
  FakeSysfs fs;
  fs.write("proc/stat", kFirst);
  HostCpuLoad load(fs.root());
  auto first = load.sample();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(load.cpuCount(), 2u);
}

TEST(HostCpuLoad, UtilisationBetweenTwoSnapshots) {
  FakeSysfs fs;
  fs.write("proc/stat", kFirst);
  HostCpuLoad load(fs.root());
  ASSERT_TRUE(load.sample().ok());
  fs.write("proc/stat", kSecond);
  auto second = load.sample();
  ASSERT_TRUE(second.ok()) << second.error().message;
  ASSERT_EQ(second->size(), 2u);
  EXPECT_DOUBLE_EQ((*second)[0], 0.6);
  EXPECT_DOUBLE_EQ((*second)[1], 0.1);

  // No time passed at all: zero, not NaN.
  auto same = load.sample();
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, (std::vector<double>{0.0, 0.0}));
}

TEST(HostCpuLoad, CpusComingAndGoing) {
  FakeSysfs fs;
  fs.write("proc/stat", "cpu0 100 0 0 100 0 0 0 0\ncpu1 100 0 0 100 0 0 0 0\n");
  HostCpuLoad load(fs.root());
  ASSERT_TRUE(load.sample().ok());

  // cpu1 went offline, cpu3 appeared: only cpu0 has a previous value.
  fs.write("proc/stat", "cpu0 150 0 0 150 0 0 0 0\ncpu3 100 0 0 100 0 0 0 0\n");
  auto grown = load.sample();
  ASSERT_TRUE(grown.ok()) << grown.error().message;
  EXPECT_EQ(*grown, (std::vector<double>{0.5, 0.0, 0.0, 0.0}));
  EXPECT_EQ(load.cpuCount(), 4u);

  fs.write("proc/stat", "cpu0 150 0 0 250 0 0 0 0\ncpu3 200 0 0 100 0 0 0 0\n");
  auto next = load.sample();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, (std::vector<double>{0.0, 0.0, 0.0, 1.0}));

  fs.write("proc/stat", "cpu0 250 0 0 250 0 0 0 0\n");
  auto shrunk = load.sample();
  ASSERT_TRUE(shrunk.ok());
  EXPECT_EQ(*shrunk, (std::vector<double>{1.0}));
  EXPECT_EQ(load.cpuCount(), 1u);
}

TEST(HostCpuLoad, CountersGoingBackwardsGiveZero) {
  FakeSysfs fs;
  fs.write("proc/stat", "cpu0 500 0 0 500 0 0 0 0\n");
  HostCpuLoad load(fs.root());
  ASSERT_TRUE(load.sample().ok());
  fs.write("proc/stat", "cpu0 10 0 0 10 0 0 0 0\n");
  auto reset = load.sample();
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(*reset, (std::vector<double>{0.0}));
}

TEST(HostCpuLoad, MalformedStatIsAnError) {
  FakeSysfs fs;
  HostCpuLoad load(fs.root());
  auto missing = load.sample();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("proc/stat: No such file or directory"), std::string::npos);

  fs.write("proc/stat", "cpu0 1 2 x 4 5\n");
  auto garbage = load.sample();
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().message.find("found 'x'"), std::string::npos) << garbage.error().message;

  fs.write("proc/stat", "cpu0 1 2\n");
  ASSERT_FALSE(load.sample().ok());

  fs.write("proc/stat", "intr 1 2 3\n");
  ASSERT_FALSE(load.sample().ok());
}

TEST(HostCpuLoad, ReadsTheRealHost) {
  HostCpuLoad load;
  auto first = load.sample();
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_GE(first->size(), 1u);
  auto second = load.sample();
  ASSERT_TRUE(second.ok());
  for (double u : *second) {
    EXPECT_GE(u, 0.0);
    EXPECT_LE(u, 1.0);
  }
}

}  // namespace
}  // namespace nk
