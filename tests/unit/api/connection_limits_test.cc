#include "api/connection_limits.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using namespace std::chrono_literals;
using Clock = ConnectionLimits::Clock;

constexpr uid_t kAlice = 1000;
constexpr uid_t kBob = 1001;

TEST(ConnectionLimits, RefusesAUserOverTheirLimitButNotOthers) {
  ConnectionLimits limits({.per_user = 3, .total = 100});
  Clock::time_point now{};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  auto refused = limits.admit(kAlice, now);
  EXPECT_FALSE(refused.admitted);
  EXPECT_FALSE(refused.over_total);
  EXPECT_TRUE(limits.admit(kBob, now).admitted);
  EXPECT_EQ(limits.openBy(kAlice), 3u);
  EXPECT_EQ(limits.openBy(kBob), 1u);
  EXPECT_EQ(limits.open(), 4u);
}

TEST(ConnectionLimits, AClosedConnectionFreesItsSlot) {
  ConnectionLimits limits({.per_user = 2, .total = 100});
  Clock::time_point now{};
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  EXPECT_FALSE(limits.admit(kAlice, now).admitted);
  limits.release(kAlice);
  EXPECT_EQ(limits.openBy(kAlice), 1u);
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
}

TEST(ConnectionLimits, ReleasingWhatWasNeverAdmittedChangesNothing) {
  ConnectionLimits limits({.per_user = 2, .total = 100});
  limits.release(kAlice);
  EXPECT_EQ(limits.open(), 0u);
  EXPECT_TRUE(limits.admit(kBob, Clock::time_point{}).admitted);
  limits.release(kAlice);
  EXPECT_EQ(limits.open(), 1u);
}

TEST(ConnectionLimits, TheTotalLimitBindsEveryUserButRoot) {
  ConnectionLimits limits({.per_user = 10, .total = 3});
  Clock::time_point now{};
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  EXPECT_TRUE(limits.admit(kBob, now).admitted);
  auto refused = limits.admit(kBob, now);
  EXPECT_FALSE(refused.admitted);
  EXPECT_TRUE(refused.over_total);
  EXPECT_TRUE(limits.admit(0, now).admitted);
  EXPECT_EQ(limits.open(), 4u);
}

TEST(ConnectionLimits, RootIsExemptFromThePerUserLimit) {
  ConnectionLimits limits({.per_user = 1, .total = 2});
  Clock::time_point now{};
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limits.admit(0, now).admitted);
  EXPECT_EQ(limits.openBy(0), 5u);
  // Root's connections fill the total for everybody else.
  EXPECT_FALSE(limits.admit(kAlice, now).admitted);
}

TEST(ConnectionLimits, RefusalsAreLoggedOncePerUserPerMinuteWithTheirCount) {
  ConnectionLimits limits({.per_user = 1, .total = 100});
  Clock::time_point now{};
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  EXPECT_TRUE(limits.admit(kBob, now).admitted);

  auto first = limits.admit(kAlice, now);
  EXPECT_TRUE(first.log_refusal);
  EXPECT_EQ(first.refusals_since_last_log, 1u);
  for (int i = 0; i < 999; ++i) EXPECT_FALSE(limits.admit(kAlice, now + 30s).log_refusal);
  // Bob's refusals have their own minute.
  EXPECT_TRUE(limits.admit(kBob, now + 30s).log_refusal);

  auto next = limits.admit(kAlice, now + 60s);
  EXPECT_TRUE(next.log_refusal);
  EXPECT_EQ(next.refusals_since_last_log, 1000u);
  EXPECT_FALSE(limits.admit(kAlice, now + 61s).log_refusal);
}

TEST(ConnectionLimits, ARefusalDoesNotCountAsOpen) {
  ConnectionLimits limits({.per_user = 1, .total = 100});
  Clock::time_point now{};
  EXPECT_TRUE(limits.admit(kAlice, now).admitted);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(limits.admit(kAlice, now).admitted);
  EXPECT_EQ(limits.open(), 1u);
  limits.release(kAlice);
  EXPECT_EQ(limits.open(), 0u);
  EXPECT_EQ(limits.openBy(kAlice), 0u);
}

}  // namespace
}  // namespace nk
