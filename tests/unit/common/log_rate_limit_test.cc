#include "common/log_rate_limit.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kS = 1'000'000'000;

TEST(LogRateLimitTest, TheFirstLinesOfAWindowAreLoggedTheRestCountedAndSaidWhenTheNextOpens) {
  LogRateLimit limit(3, 60s);
  for (int i = 0; i < 3; ++i) {
    auto d = limit.admit(i * kS);
    EXPECT_TRUE(d.log) << i;
    EXPECT_EQ(d.held_back, 0u);
  }
  for (int i = 3; i < 1000; ++i) EXPECT_FALSE(limit.admit(10 * kS).log) << i;
  auto next = limit.admit(61 * kS);
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.held_back, 997u);
  EXPECT_EQ(limit.admit(62 * kS).held_back, 0u) << "said once";
}

TEST(LogRateLimitTest, AQuietSourceIsNeverHeldBack) {
  LogRateLimit limit(2, 1s);
  for (int i = 0; i < 100; ++i) {
    auto d = limit.admit(i * kS);
    EXPECT_TRUE(d.log);
    EXPECT_EQ(d.held_back, 0u);
  }
}

TEST(LogRateLimitTest, AClockThatStepsBackOpensANewWindow) {
  LogRateLimit limit(1, 60s);
  EXPECT_TRUE(limit.admit(100 * kS).log);
  EXPECT_FALSE(limit.admit(101 * kS).log);
  auto d = limit.admit(50 * kS);
  EXPECT_TRUE(d.log);
  EXPECT_EQ(d.held_back, 1u);
}

}  // namespace
}  // namespace nk
