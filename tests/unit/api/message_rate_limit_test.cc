#include "api/message_rate_limit.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;
using Clock = MessageRateLimit::Clock;

TEST(MessageRateLimit, TakesABurstOfOneSecondsWorthThenRefuses) {
  MessageRateLimit limit(100);
  Clock::time_point now{};
  int admitted = 0;
  for (int i = 0; i < 250; ++i) admitted += limit.admit(now) ? 1 : 0;
  EXPECT_EQ(admitted, 100);
  EXPECT_FALSE(limit.admit(now));
}

TEST(MessageRateLimit, RefillsAtTheRate) {
  MessageRateLimit limit(100);
  Clock::time_point now{};
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(limit.admit(now));
  ASSERT_FALSE(limit.admit(now));
  now += 100ms;  // 10 more
  int admitted = 0;
  for (int i = 0; i < 50; ++i) admitted += limit.admit(now) ? 1 : 0;
  EXPECT_EQ(admitted, 10);
}

TEST(MessageRateLimit, AStreamAtTheRateIsNeverRefused) {
  MessageRateLimit limit(1000);
  Clock::time_point now{};
  for (int i = 0; i < 100000; ++i) {
    now += 1ms;
    ASSERT_TRUE(limit.admit(now)) << "message " << i;
  }
}

TEST(MessageRateLimit, AFastStreamIsRefusedWithinTheSecond) {
  MessageRateLimit limit(1000);
  Clock::time_point now{};
  int refused_at = -1;
  for (int i = 0; i < 100000 && refused_at < 0; ++i) {
    now += 500us;  // twice the rate
    if (!limit.admit(now)) refused_at = i;
  }
  ASSERT_GE(refused_at, 0);
  EXPECT_LT(refused_at, 2100);  // the 1000-message burst is gone after about 2000 messages
}

TEST(MessageRateLimit, AClockThatStepsBackDoesNotGrantMore) {
  MessageRateLimit limit(10);
  Clock::time_point now = Clock::time_point{} + 10s;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(limit.admit(now));
  EXPECT_FALSE(limit.admit(now - 5s));
  EXPECT_FALSE(limit.admit(now));
}

// take(): what a stream that is slowed rather than ended is told.
TEST(MessageRateLimit, TakeWaitsNothingWithinTheBurstThenOneMessagesWorth) {
  MessageRateLimit limit(100);
  Clock::time_point now{};
  for (int i = 0; i < 100; ++i) ASSERT_EQ(limit.take(now), Clock::duration::zero()) << "message " << i;
  EXPECT_EQ(limit.take(now), std::chrono::duration_cast<Clock::duration>(10ms));
  EXPECT_EQ(limit.take(now), std::chrono::duration_cast<Clock::duration>(20ms)) << "what is owed adds up";
}

TEST(MessageRateLimit, TakeNeverWaitsAStreamAtTheRate) {
  MessageRateLimit limit(1000);
  Clock::time_point now{};
  for (int i = 0; i < 100000; ++i) {
    now += 1ms;
    ASSERT_EQ(limit.take(now), Clock::duration::zero()) << "message " << i;
  }
}

// A daemon that was stalled finds 100,000 messages waiting at once: read as
// take() says, they come at the rate after the burst, and none is refused.
TEST(MessageRateLimit, AClumpReadAsTakeSaysComesAtTheRate) {
  MessageRateLimit limit(1000);
  const Clock::time_point start = Clock::time_point{} + 1h;
  Clock::time_point now = start;
  int read_by_ten_seconds = 0;
  for (int i = 0; i < 100000; ++i) {
    if (now - start <= 10s) ++read_by_ten_seconds;
    now += limit.take(now);
  }
  // The burst of 1,000, then 1,000 a second for ten seconds.
  EXPECT_NEAR(read_by_ten_seconds, 11000, 2);
  EXPECT_NEAR(std::chrono::duration<double>(now - start).count(), 99.0, 0.01);
}

TEST(MessageRateLimit, TakeUnderAClockThatStepsBackOwesNoLess) {
  MessageRateLimit limit(10);
  Clock::time_point now = Clock::time_point{} + 10s;
  for (int i = 0; i < 10; ++i) ASSERT_EQ(limit.take(now), Clock::duration::zero());
  EXPECT_EQ(limit.take(now - 5s), std::chrono::duration_cast<Clock::duration>(100ms));
  EXPECT_EQ(limit.take(now), std::chrono::duration_cast<Clock::duration>(200ms));
}

}  // namespace
}  // namespace nk
