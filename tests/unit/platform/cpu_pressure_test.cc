#include "platform/cpu_pressure.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testlib/temp_dir.h"

namespace nk {
namespace {

TEST(CpuPressureTest, ParsesTheSomeLinesAvg10) {
  EXPECT_EQ(CpuPressure::parse("some avg10=95.17 avg60=62.34 avg300=27.64 total=5376590894\n"
                               "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
            95.17);
  EXPECT_EQ(CpuPressure::parse("full avg10=3.00 avg60=0 avg300=0 total=0\nsome avg10=0.50 avg60=0 avg300=0 total=1"),
            0.5);
}

TEST(CpuPressureTest, AnythingElseIsUnknown) {
  EXPECT_FALSE(CpuPressure::parse(""));
  EXPECT_FALSE(CpuPressure::parse("full avg10=1.00\n"));
  EXPECT_FALSE(CpuPressure::parse("some avg60=1.00\n"));
  EXPECT_FALSE(CpuPressure::parse("some avg10=x avg60=1\n"));
  EXPECT_FALSE(CpuPressure::parse("some avg10=250.0 avg60=1\n"));
}

TEST(CpuPressureTest, ReadsTheFileUnderItsRoot) {
  test::TempDir root{"pressure"};
  EXPECT_FALSE(CpuPressure(root.path()).someAvg10()) << "no PSI: unknown";
  std::filesystem::create_directories(root.path() / "proc/pressure");
  std::ofstream(root.path() / "proc/pressure/cpu") << "some avg10=12.50 avg60=1.00 avg300=0.00 total=99\n";
  EXPECT_EQ(CpuPressure(root.path()).someAvg10(), 12.5);
}

}  // namespace
}  // namespace nk
