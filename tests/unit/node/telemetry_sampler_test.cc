#include "node/telemetry_sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "fake_platform.h"

namespace nk {
namespace {

NodeTopology twoByTwo() {
  NodeTopology topology;
  topology.packages = 2;
  for (uint32_t i = 0; i < 4; ++i) {
    CoreInfo core{i, i / 2, i % 2, 0, {i}, {i}};
    core.os_core_id = core.core_id;
    topology.cores.push_back(core);
  }
  return topology;
}

// A 2-package, 4-core node of fakes, for a sampler to read.
class TelemetrySamplerTest : public ::testing::Test {
 protected:
  TelemetrySampler makeSampler(std::chrono::milliseconds interval = std::chrono::milliseconds(100)) {
    return TelemetrySampler(topology, cpufreq, meter, thermal, nullptr, interval);
  }

  NodeTopology topology = twoByTwo();
  test::FakeCpuFreq cpufreq{4};
  test::FakePowerMeter meter{2};
  test::FakeThermal thermal;
};

TEST_F(TelemetrySamplerTest, MapsFrequencyTemperatureAndPower) {
  cpufreq.policies_[3].cur_khz = 2400000;
  thermal.readings = {{TemperatureReading::Kind::kCore, 1, 1, 61.5, "Core 1"},
                      {TemperatureReading::Kind::kPackage, 1, 0, 63.0, "Package id 1"}};
  TelemetrySampler sampler = makeSampler();
  auto first = sampler.sampleNow();
  ASSERT_EQ(first->cores.size(), 4u);
  EXPECT_EQ(first->cores[3].cur_khz, 2400000u);
  EXPECT_EQ(first->cores[3].governor, "ondemand");
  EXPECT_DOUBLE_EQ(first->cores[3].temperature_c, 61.5);
  EXPECT_TRUE(std::isnan(first->cores[0].temperature_c));
  EXPECT_DOUBLE_EQ(first->packages[1].temperature_c, 63.0);

  // Energy with a wrap in between: 900000 -> 100000 on a 1 J range is 0.2 J.
  meter.zones_[0].energy_uj = 900000;
  auto before = sampler.sampleNow();
  meter.zones_[0].energy_uj = 100000;
  auto after = sampler.sampleNow();
  EXPECT_NEAR(after->packages[0].energy_j - before->packages[0].energy_j, 0.2, 1e-9);
  EXPECT_GT(after->seq, before->seq);
  EXPECT_EQ(sampler.latest()->seq, after->seq);
}

TEST_F(TelemetrySamplerTest, AFreshSampleIsSharedUntilItAgesOrAWriteHappens) {
  TelemetrySampler sampler = makeSampler();
  auto first = sampler.sampleNoOlderThan(std::chrono::hours(1));
  // Within the age: the same sample, however often asked.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sampler.sampleNoOlderThan(std::chrono::hours(1))->seq, first->seq);
  // Older than asked: read again.
  auto second = sampler.sampleNoOlderThan(std::chrono::nanoseconds(0));
  EXPECT_GT(second->seq, first->seq);
  // A change made since (a frequency limit written): the hardware again, so
  // a read after a write sees the write.
  cpufreq.policies_[3].cur_khz = 2400000;
  sampler.invalidatePolicies();
  auto third = sampler.sampleNoOlderThan(std::chrono::hours(1));
  EXPECT_GT(third->seq, second->seq);
  EXPECT_EQ(third->cores[3].cur_khz, 2400000u);
}

TEST_F(TelemetrySamplerTest, PoliciesAreReReadByThePeriodicSamplesNotByFreshOnes) {
  TelemetrySampler sampler = makeSampler(std::chrono::milliseconds(5));
  // Another tool changes a governor and the frequency moves.
  cpufreq.policies_[1].governor = "performance";
  cpufreq.policies_[1].cur_khz = 2600000;
  for (int i = 0; i < 25; ++i) {
    auto fresh = sampler.sampleNow();
    EXPECT_EQ(fresh->cores[1].cur_khz, 2600000u);
    EXPECT_EQ(fresh->cores[1].governor, "ondemand") << "fresh sample " << i << " re-read the policies";
  }
  // The sampler notices within ten of its own samples.
  sampler.start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sampler.latest()->cores[1].governor != "performance" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  sampler.stop();
  EXPECT_EQ(sampler.latest()->cores[1].governor, "performance");
}

TEST_F(TelemetrySamplerTest, ReportsUnreadableFilesAsWarnings) {
  TelemetrySampler sampler = makeSampler();
  cpufreq.policies_.erase(2);  // a policy vanished
  sampler.invalidatePolicies();
  auto sample = sampler.sampleNow();
  EXPECT_EQ(sample->cores[2].cur_khz, 0u);
  EXPECT_EQ(sample->cores[1].cur_khz, 1200000u);
}

}  // namespace
}  // namespace nk
