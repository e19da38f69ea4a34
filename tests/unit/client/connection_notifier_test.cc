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
  EXPECT_EQ(*back, "nodekeeper: connected to nodekeeperd at /s; managed");
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

}  // namespace
}  // namespace nk::client
