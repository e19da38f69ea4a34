#include "faults/cancellation_check.h"

#include <gtest/gtest.h>

#include <csignal>

namespace nk {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 1'700'000'000'000 * kMs;

TEST(CancellationCheckTest, ACancellationIsConfirmedOnceAfterItsGraceWithoutCrashNews) {
  CancellationCheck check(1000ms);
  check.seen({SIGINT, 3}, kT0);
  EXPECT_TRUE(check.pending());
  EXPECT_FALSE(check.confirmed(kT0 + 999 * kMs));
  auto confirmed = check.confirmed(kT0 + 1000 * kMs);
  ASSERT_TRUE(confirmed);
  EXPECT_EQ(confirmed->signal, SIGINT);
  EXPECT_EQ(confirmed->rank, 3u);
  EXPECT_FALSE(check.pending());
  EXPECT_FALSE(check.confirmed(kT0 + 5000 * kMs)) << "said once";
}

// Node b's rank crashed; mpirun SIGTERMed the ranks here. The news of the
// crash comes within the grace: no cancellation.
TEST(CancellationCheckTest, CrashNewsFromAnotherNodeWithinTheGraceMakesItACrashsTeardown) {
  CancellationCheck check(1000ms);
  check.seen({SIGTERM, 0}, kT0);
  EXPECT_TRUE(check.crashNews("b"));
  EXPECT_FALSE(check.crashNews("c")) << "the first news counts";
  EXPECT_FALSE(check.pending());
  EXPECT_FALSE(check.confirmed(kT0 + 10'000 * kMs));
  EXPECT_EQ(check.crashedOn(), "b");
  ASSERT_TRUE(check.overruled());
  EXPECT_EQ(check.overruled()->signal, SIGTERM);
}

TEST(CancellationCheckTest, CrashNewsBeforeTheRanksHereEndIsNoCancellationEither) {
  CancellationCheck check(1000ms);
  check.crashNews("b");
  check.seen({SIGTERM, 0}, kT0);
  EXPECT_FALSE(check.pending());
  EXPECT_FALSE(check.confirmed(kT0 + 10'000 * kMs));
  EXPECT_TRUE(check.overruled());
}

TEST(CancellationCheckTest, TheGraceGrowsWithTheDelayFactor) {
  CancellationCheck check(1000ms);
  check.seen({SIGHUP, 1}, kT0);
  EXPECT_FALSE(check.confirmed(kT0 + 2500 * kMs, 3.0));
  EXPECT_TRUE(check.confirmed(kT0 + 3000 * kMs, 3.0));
}

TEST(CancellationCheckTest, CrashNewsAfterTheConfirmationChangesNothing) {
  CancellationCheck check(1000ms);
  check.seen({SIGINT, 0}, kT0);
  ASSERT_TRUE(check.confirmed(kT0 + 1000 * kMs));
  check.crashNews("b");
  EXPECT_FALSE(check.overruled());
}

}  // namespace
}  // namespace nk
