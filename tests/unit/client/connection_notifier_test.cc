#include "connection_notifier.h"

#include <gtest/gtest.h>

namespace nk::client {
namespace {

TEST(ConnectionNotifier, AbsentDaemonGivesExactlyOneLine) {
  ConnectionNotifier notifier("/run/x.sock");
  auto first = notifier.failed("unavailable");
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, "nodekeeper: nodekeeperd not reachable at /run/x.sock (unavailable); running unmanaged");
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(notifier.failed("unavailable"));
}

TEST(ConnectionNotifier, QuietWhenManagedFromTheStart) { EXPECT_FALSE(ConnectionNotifier("/s").connected()); }

TEST(ConnectionNotifier, OneLinePerChange) {
  ConnectionNotifier notifier("/s");
  EXPECT_FALSE(notifier.connected());
  auto lost = notifier.failed("stream closed");
  ASSERT_TRUE(lost);
  EXPECT_NE(lost->find("lost nodekeeperd at /s"), std::string::npos);
  EXPECT_FALSE(notifier.failed("unavailable"));
  auto back = notifier.connected();
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "nodekeeper: reconnected to nodekeeperd at /s; managed");
  EXPECT_FALSE(notifier.connected());
}

TEST(ConnectionNotifier, GaveBackSaysWhatTheProgramGotBack) {
  EXPECT_FALSE(ConnectionNotifier::gaveBack(0, 0));
  auto both = ConnectionNotifier::gaveBack(12, 11);
  ASSERT_TRUE(both);
  EXPECT_EQ(*both, "nodekeeper: gave the program back its own team size (12 threads) from the next parallel region "
                   "and its own affinity to 11 threads");
  auto pins = ConnectionNotifier::gaveBack(0, 1);
  ASSERT_TRUE(pins);
  EXPECT_EQ(*pins, "nodekeeper: gave the program back its own affinity to 1 thread");
}

using Failure = ConnectionNotifier::Failure;
using namespace std::chrono_literals;

TEST(ConnectionNotifier, ConnectedAfterAbsenceAtStartIsNotAReconnection) {
  ConnectionNotifier notifier("/s");
  ASSERT_TRUE(notifier.failed("no socket"));
  auto first = notifier.connected();
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, "nodekeeper: connected to nodekeeperd at /s; managed");
}

// A busy daemon is not a gone one: never cry wolf.
TEST(ConnectionNotifier, SlowAnswersAreQuietUntilTheDaemonHasBeenSilentForLong) {
  ConnectionNotifier notifier("/s", nullptr, 5s);
  const auto t0 = ConnectionNotifier::Clock::time_point{} + 100s;
  EXPECT_FALSE(notifier.connected());
  EXPECT_FALSE(notifier.failed("control stream closed: gRPC code 1: CANCELLED", Failure::kNoAnswerYet, t0));
  EXPECT_FALSE(notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 2s));
  // It answered again: quiet, and the silence starts over.
  EXPECT_FALSE(notifier.connected());
  EXPECT_FALSE(notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 6s));
  EXPECT_FALSE(notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 10s));
  auto lost = notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 11s);
  ASSERT_TRUE(lost);
  EXPECT_EQ(*lost, "nodekeeper: lost nodekeeperd at /s (no answer for 5 s; last: no answer in time); running unmanaged");
  EXPECT_FALSE(notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 20s));
  auto back = notifier.connected();
  ASSERT_TRUE(back);
  EXPECT_NE(back->find("reconnected"), std::string::npos);
}

TEST(ConnectionNotifier, AGoneDaemonIsSaidAtOnceEvenDuringASlowSpell) {
  ConnectionNotifier notifier("/s", nullptr, 5s);
  const auto t0 = ConnectionNotifier::Clock::time_point{} + 100s;
  EXPECT_FALSE(notifier.connected());
  EXPECT_FALSE(notifier.failed("control stream closed", Failure::kNoAnswerYet, t0));
  auto lost = notifier.failed("connection refused", Failure::kDefinite, t0 + 100ms);
  ASSERT_TRUE(lost);
  EXPECT_NE(lost->find("lost nodekeeperd at /s (connection refused)"), std::string::npos) << *lost;
}

TEST(ConnectionNotifier, ASlowDaemonAtStartIsNotSaidBeforeTheProgramEnds) {
  ConnectionNotifier notifier("/s", nullptr, 5s);
  const auto t0 = ConnectionNotifier::Clock::time_point{} + 100s;
  EXPECT_FALSE(notifier.failed("no answer in time", Failure::kNoAnswerYet, t0));
  EXPECT_FALSE(notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 4s));
  auto absent = notifier.failed("no answer in time", Failure::kNoAnswerYet, t0 + 5s);
  ASSERT_TRUE(absent);
  EXPECT_NE(absent->find("not reachable at /s (no answer for 5 s"), std::string::npos) << *absent;
}

}  // namespace
}  // namespace nk::client
