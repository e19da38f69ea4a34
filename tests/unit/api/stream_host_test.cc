#include "api/stream_host.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nk {
namespace {

PeerCredentials user(uid_t uid, pid_t pid = 4242) {
  PeerCredentials peer;
  peer.uid = uid;
  peer.pid = pid;
  return peer;
}

struct StreamHostTest : ::testing::Test {
  std::vector<std::string> logged;
  StreamHost host{StreamHost::Settings{.streams = {.per_user = 2, .total = 3}, .messages_per_second = 5},
                  [this](const std::string& line) { logged.push_back(line); }};
};

TEST_F(StreamHostTest, RefusesAUsersStreamOverTheirLimitWithResourceExhausted) {
  auto first = host.admit(user(1000), "Faults.WatchSymptoms");
  auto second = host.admit(user(1000), "Faults.WatchSymptoms");
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  auto third = host.admit(user(1000), "Faults.WatchSymptoms");
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(third.error().message.find("streams_per_user 2"), std::string::npos) << third.error().message;
  EXPECT_TRUE(host.admit(user(1001), "Faults.WatchSymptoms")) << "another user is not held to the first one's count";
}

TEST_F(StreamHostTest, RefusesPastTheTotalAndNamesIt) {
  auto a = host.admit(user(1000), "x");
  auto b = host.admit(user(1001), "x");
  auto c = host.admit(user(1002), "x");
  auto d = host.admit(user(1003), "x");
  ASSERT_TRUE(a && b && c);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("streams_total 3"), std::string::npos) << d.error().message;
}

TEST_F(StreamHostTest, RootIsNeverRefused) {
  std::vector<StreamHost::Slot> slots;
  for (int i = 0; i < 10; ++i) {
    auto slot = host.admit(user(0), "Tasks.Watch");
    ASSERT_TRUE(slot) << i;
    slots.push_back(std::move(*slot));
  }
}

TEST_F(StreamHostTest, ADestroyedSlotGivesItsPlaceBack) {
  {
    auto first = host.admit(user(1000), "x");
    auto second = host.admit(user(1000), "x");
    ASSERT_TRUE(first && second);
    StreamHost::Slot moved = std::move(*first);  // a move keeps one place, not two
    ASSERT_FALSE(host.admit(user(1000), "x"));
  }
  EXPECT_TRUE(host.admit(user(1000), "x"));
}

TEST_F(StreamHostTest, RefusalsAreLoggedOncePerUserNotOncePerStream) {
  auto first = host.admit(user(1000), "x");
  auto second = host.admit(user(1000), "x");
  for (int i = 0; i < 50; ++i) ASSERT_FALSE(host.admit(user(1000), "Tasks.Debug"));
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("uid 1000"), std::string::npos) << logged[0];
  EXPECT_NE(logged[0].find("Tasks.Debug"), std::string::npos) << logged[0];
}

TEST_F(StreamHostTest, AStreamHeldToTheRateIsLoggedOncePerUser) {
  host.heldToRate(1000, 77, "Tasks.Publish");
  host.heldToRate(1000, 78, "Tasks.Publish");
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("holding a Tasks.Publish stream of uid 1000 (pid 77) to 5 messages a second"),
            std::string::npos)
      << logged[0];
  host.heldToRate(1001, 79, "Tasks.Publish");
  EXPECT_EQ(logged.size(), 2u) << "another user's is logged too";
}

struct Tracked {
  explicit Tracked(bool& destroyed) : destroyed_(destroyed) {}
  virtual ~Tracked() { destroyed_ = true; }
  bool& destroyed_;
};
struct TrackedStream : Tracked {
  using Tracked::Tracked;
  int payload = 7;
};

TEST_F(StreamHostTest, HoldsAnAdoptedStreamUntilReleasedThroughAnyOfItsTypes) {
  bool destroyed = false;
  TrackedStream* stream = host.adopt(std::make_unique<TrackedStream>(destroyed));
  EXPECT_EQ(host.open(), 1u);
  EXPECT_FALSE(destroyed);
  host.release(static_cast<Tracked*>(stream));
  EXPECT_TRUE(destroyed);
  EXPECT_EQ(host.open(), 0u);
}

}  // namespace
}  // namespace nk
