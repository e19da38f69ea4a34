// MessagePacer against the daemon's own MessageRateLimit: every message the
// pacer lets go, at the time it lets it go, is one the daemon admits, and
// the pacer does not crawl far under the rate either.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>

#include "api/message_rate_limit.h"
#include "message_pacer.h"

namespace nk::client {
namespace {

using Clock = MessagePacer::Clock;
using namespace std::chrono_literals;

struct Outcome {
  uint64_t sent = 0;
  uint64_t refused = 0;
  Clock::time_point last{};
};

// `messages` offered by a shipper whose next message is ready `gap` after
// the last went (plus up to `jitter`), each sent after the pacer's wait
// and seen by the daemon `delay` later.
Outcome drive(uint32_t daemon_rate, std::optional<uint32_t> said, uint64_t messages, Clock::duration gap,
              Clock::duration jitter, Clock::duration delay, uint64_t seed) {
  MessagePacer pacer(said);
  MessageRateLimit daemon(daemon_rate);
  std::mt19937_64 random(seed);
  Clock::time_point now{std::chrono::hours(1)};
  Outcome out;
  for (uint64_t i = 0; i < messages; ++i) {
    now += pacer.take(now);
    if (daemon.admit(now + delay))
      ++out.sent;
    else
      ++out.refused;
    out.last = now;
    const auto extra = jitter.count() > 0 ? Clock::duration(static_cast<Clock::rep>(random() % jitter.count())) : 0ns;
    now += gap + extra;
  }
  return out;
}

TEST(MessagePacer, EveryMessageItLetsGoTheDaemonAdmits) {
  for (uint32_t rate : {1u, 3u, 100u, 2500u, 10000u, 1000000u}) {
    for (Clock::duration gap : {Clock::duration(0ns), Clock::duration(50us), Clock::duration(1ms)}) {
      SCOPED_TRACE("rate " + std::to_string(rate) + " gap " + std::to_string(gap.count()) + " ns");
      const uint64_t messages = std::max<uint64_t>(20, 5ull * rate);
      const Outcome o = drive(rate, rate, messages, gap, gap, 0ns, rate);
      EXPECT_EQ(o.refused, 0u);
      EXPECT_EQ(o.sent, messages);
    }
  }
}

TEST(MessagePacer, ADaemonThatReadsLateStillAdmitsEveryMessage) {
  // A constant delay between sending and the daemon's read: its bucket
  // started later, with the same refill.
  const Outcome o = drive(1000, 1000, 20000, 0ns, 0ns, 300ms, 1);
  EXPECT_EQ(o.refused, 0u);
}

TEST(MessagePacer, FlatOutItSendsAtNineTenthsOfTheRate) {
  const uint32_t rate = 1000;
  const uint64_t messages = 10 * rate;
  const Outcome o = drive(rate, rate, messages, 0ns, 0ns, 0ns, 2);
  // After the first burst (0.9 s worth), 0.9 of the rate.
  const double seconds = std::chrono::duration<double>(o.last - Clock::time_point{std::chrono::hours(1)}).count();
  const double expected = (static_cast<double>(messages) - 0.9 * rate) / (0.9 * rate);
  EXPECT_NEAR(seconds, expected, 0.01 * expected);
}

TEST(MessagePacer, ADaemonThatNamesNoRateHasTheDefault) {
  EXPECT_DOUBLE_EQ(MessagePacer(std::nullopt).perSecond(), 0.9 * MessagePacer::kDefaultPerSecond);
  const Outcome o = drive(MessagePacer::kDefaultPerSecond, std::nullopt, 50000, 0ns, 0ns, 0ns, 3);
  EXPECT_EQ(o.refused, 0u);
}

TEST(MessagePacer, ANewRateStartsTheCountAfresh) {
  MessagePacer pacer(10);
  Clock::time_point now{};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(pacer.take(now), Clock::duration::zero());
  EXPECT_GT(pacer.take(now), Clock::duration::zero());
  pacer.setRate(10);
  EXPECT_EQ(pacer.take(now), Clock::duration::zero());
}

}  // namespace
}  // namespace nk::client
