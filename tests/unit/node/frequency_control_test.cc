#include "node/frequency_control.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_platform.h"
#include "node/saved_controls.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

class FrequencyControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto saved = SavedControls::open(dir_ / "saved.json");
    ASSERT_TRUE(saved.ok());
    saved_ = std::make_unique<SavedControls>(std::move(*saved));
  }

  test::TempDir dir_{"freq"};
  std::unique_ptr<SavedControls> saved_;
};

TEST_F(FrequencyControlTest, SetsMaxOnChosenCpusOnly) {
  test::FakeCpuFreq cpufreq(12);
  FrequencyControl control(cpufreq, *saved_);
  auto result = control.setLimits({.cpus = {0, 1, 2, 3}, .max_khz = 1800000});
  ASSERT_TRUE(result.ok()) << result.error().message;
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(cpufreq.policies_[i].max_khz, 1800000u);
  for (uint32_t i = 4; i < 12; ++i) EXPECT_EQ(cpufreq.policies_[i].max_khz, 2600000u);
  EXPECT_EQ(saved_->entries().size(), 4u);
  EXPECT_EQ(saved_->entries()[0].key, "cpufreq:0:scaling_max_freq");
  EXPECT_EQ(saved_->entries()[0].original, "2600000");
}

TEST_F(FrequencyControlTest, SpeedSwitchesToUserspace) {
  test::FakeCpuFreq cpufreq(2);
  FrequencyControl control(cpufreq, *saved_);
  ASSERT_TRUE(control.setLimits({.cpus = {1}, .speed_khz = 2000000}).ok());
  EXPECT_EQ(cpufreq.policies_[1].governor, "userspace");
  EXPECT_EQ(cpufreq.policies_[1].setspeed_khz, 2000000u);
  EXPECT_EQ(cpufreq.policies_[0].governor, "ondemand");
  EXPECT_TRUE(saved_->contains("cpufreq:1:scaling_governor"));
}

TEST_F(FrequencyControlTest, SpeedUnderIntelPstatePinsMinAndMax) {
  test::FakeCpuFreq cpufreq(2, /*intel_pstate=*/true);
  FrequencyControl control(cpufreq, *saved_);
  auto result = control.setLimits({.speed_khz = 2000000});
  ASSERT_TRUE(result.ok()) << result.error().message;
  for (auto& [id, p] : cpufreq.policies_) {
    EXPECT_EQ(p.min_khz, 2000000u);
    EXPECT_EQ(p.max_khz, 2000000u);
    EXPECT_EQ(p.governor, "powersave");
  }
  // Any frequency in range is fine without a table.
  EXPECT_TRUE(control.setLimits({.max_khz = 2345678}).ok());
}

TEST_F(FrequencyControlTest, RejectsWithoutWriting) {
  test::FakeCpuFreq cpufreq(4);
  FrequencyControl control(cpufreq, *saved_);
  auto outside = control.setLimits({.max_khz = 3000000});
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(outside.error().message.find("outside the hardware range"), std::string::npos);

  auto not_in_table = control.setLimits({.max_khz = 1850000});
  ASSERT_FALSE(not_in_table.ok());
  EXPECT_NE(not_in_table.error().message.find("not an available frequency"), std::string::npos);

  auto no_cpu = control.setLimits({.cpus = {0, 99}, .max_khz = 1800000});
  ASSERT_FALSE(no_cpu.ok());
  EXPECT_EQ(no_cpu.error().code, ErrorCode::kNotFound);
  EXPECT_NE(no_cpu.error().message.find("CPU 99"), std::string::npos);

  auto crossed = control.setLimits({.min_khz = 2000000, .max_khz = 1800000});
  ASSERT_FALSE(crossed.ok());

  auto bad_governor = control.setGovernor({}, "turbo");
  ASSERT_FALSE(bad_governor.ok());
  EXPECT_NE(bad_governor.error().message.find("available:"), std::string::npos);

  EXPECT_EQ(cpufreq.writes, 0);
  EXPECT_TRUE(saved_->entries().empty());
}

TEST_F(FrequencyControlTest, FailedWriteRollsBack) {
  test::FakeCpuFreq cpufreq(4);
  cpufreq.fail_on.insert("max2");
  FrequencyControl control(cpufreq, *saved_);
  auto result = control.setLimits({.max_khz = 1800000});
  ASSERT_FALSE(result.ok());
  for (auto& [id, p] : cpufreq.policies_) EXPECT_EQ(p.max_khz, 2600000u) << "policy " << id;
}

TEST_F(FrequencyControlTest, RaisingMinAboveMaxWritesMaxFirst) {
  test::FakeCpuFreq cpufreq(1);
  cpufreq.policies_[0].max_khz = 1500000;
  FrequencyControl control(cpufreq, *saved_);
  ASSERT_TRUE(control.setLimits({.min_khz = 2000000, .max_khz = 2400000}).ok());
  EXPECT_EQ(cpufreq.policies_[0].min_khz, 2000000u);
  EXPECT_EQ(cpufreq.policies_[0].max_khz, 2400000u);
}

TEST_F(FrequencyControlTest, RestoreBringsBackOriginals) {
  test::FakeCpuFreq cpufreq(2);
  FrequencyControl control(cpufreq, *saved_);
  ASSERT_TRUE(control.setLimits({.min_khz = 2000000, .max_khz = 2200000}).ok());
  ASSERT_TRUE(control.setLimits({.cpus = {0}, .speed_khz = 2100000}).ok());
  ASSERT_TRUE(control.setGovernor({1}, "performance").ok());
  ASSERT_TRUE(control.restore(saved_->entries()).ok());
  for (auto& [id, p] : cpufreq.policies_) {
    EXPECT_EQ(p.min_khz, 1200000u);
    EXPECT_EQ(p.max_khz, 2600000u);
    EXPECT_EQ(p.governor, "ondemand");
  }
}

TEST_F(FrequencyControlTest, SavedControlsSurviveReopen) {
  test::FakeCpuFreq cpufreq(2);
  {
    FrequencyControl control(cpufreq, *saved_);
    ASSERT_TRUE(control.setLimits({.max_khz = 1800000}).ok());
  }
  auto reopened = SavedControls::open(dir_ / "saved.json");
  ASSERT_TRUE(reopened.ok());
  ASSERT_EQ(reopened->entries().size(), 2u);
  // Only the first original counts: a second write must not overwrite it.
  FrequencyControl control(cpufreq, *reopened);
  ASSERT_TRUE(control.setLimits({.max_khz = 1500000}).ok());
  EXPECT_EQ(reopened->entries()[0].original, "2600000");
  ASSERT_TRUE(control.restore(reopened->entries()).ok());
  EXPECT_EQ(cpufreq.policies_[0].max_khz, 2600000u);
  ASSERT_TRUE(reopened->clear().ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "saved.json"));
}

}  // namespace
}  // namespace nk
