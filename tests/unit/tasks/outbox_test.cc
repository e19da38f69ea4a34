#include "tasks/outbox.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <thread>

namespace nk {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

v1::DebugUpdate update(uint64_t command_id) {
  v1::DebugUpdate u;
  u.set_command_id(command_id);
  return u;
}

std::vector<uint64_t> idsOf(const std::deque<v1::DebugUpdate>& updates) {
  std::vector<uint64_t> ids;
  for (const auto& u : updates) ids.push_back(u.command_id());
  return ids;
}

TEST(OutboxTest, UpdatesLeaveInTheOrderTheyWerePushed) {
  Outbox outbox;
  for (uint64_t id : {3, 1, 2}) outbox.push(update(id));
  std::deque<v1::DebugUpdate> out;
  ASSERT_TRUE(outbox.take(out, 0ms));
  EXPECT_EQ(idsOf(out), (std::vector<uint64_t>{3, 1, 2}));

  outbox.push(update(4));
  ASSERT_TRUE(outbox.take(out, 0ms));
  EXPECT_EQ(idsOf(out), (std::vector<uint64_t>{4})) << "what was taken before must not come again";
}

TEST(OutboxTest, TakeReplacesWhatTheCallerStillHeld) {
  Outbox outbox;
  std::deque<v1::DebugUpdate> out = {update(9)};
  outbox.push(update(1));
  ASSERT_TRUE(outbox.take(out, 0ms));
  EXPECT_EQ(idsOf(out), (std::vector<uint64_t>{1}));
  ASSERT_TRUE(outbox.take(out, 0ms));
  EXPECT_TRUE(out.empty()) << "the caller's old update went back into the queue";
}

TEST(OutboxTest, AnEmptyOutboxWaitsTheWholeTimeoutAndStaysOpen) {
  Outbox outbox;
  std::deque<v1::DebugUpdate> out;
  auto start = SteadyClock::now();
  EXPECT_TRUE(outbox.take(out, 50ms));
  EXPECT_GE(SteadyClock::now() - start, 50ms);
  EXPECT_TRUE(out.empty());
}

TEST(OutboxTest, APushWakesAWaitingTakeBeforeItsTimeout) {
  Outbox outbox;
  std::deque<v1::DebugUpdate> out;
  std::thread pusher([&] {
    std::this_thread::sleep_for(20ms);
    outbox.push(update(5));
  });
  auto start = SteadyClock::now();
  EXPECT_TRUE(outbox.take(out, 10s));
  EXPECT_LT(SteadyClock::now() - start, 5s);
  pusher.join();
  EXPECT_EQ(idsOf(out), (std::vector<uint64_t>{5}));
}

TEST(OutboxTest, CloseHandsOutWhatIsQueuedThenEnds) {
  Outbox outbox;
  outbox.push(update(1));
  outbox.push(update(2));
  outbox.close();
  std::deque<v1::DebugUpdate> out;
  ASSERT_TRUE(outbox.take(out, 0ms));
  EXPECT_EQ(idsOf(out), (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(outbox.take(out, 10s));
  EXPECT_TRUE(out.empty());
}

TEST(OutboxTest, CloseWakesAWaitingTakeAtOnce) {
  Outbox outbox;
  std::deque<v1::DebugUpdate> out;
  std::thread closer([&] {
    std::this_thread::sleep_for(20ms);
    outbox.close();
  });
  auto start = SteadyClock::now();
  EXPECT_FALSE(outbox.take(out, 10s));
  EXPECT_LT(SteadyClock::now() - start, 5s);
  closer.join();
}

}  // namespace
}  // namespace nk
