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

}  // namespace
}  // namespace nk::client
