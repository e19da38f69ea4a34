#include "cli/ui/event_queue.h"

#include <gtest/gtest.h>

#include <chrono>

namespace nk::ui {
namespace {

using namespace std::chrono_literals;

TEST(EventQueue, FramesAreOneLineOfData) {
  EXPECT_EQ(EventQueue::frame("status", {{"stall", "a\nb"}}), "event: status\ndata: {\"stall\":\"a\\nb\"}\n\n");
}

TEST(EventQueue, EachReaderGetsWhatCameAfterItSubscribed) {
  EventQueue queue;
  queue.push("news", {{"n", 0}});  // nobody reads it
  uint64_t a = queue.subscribe();
  queue.push("news", {{"n", 1}});
  uint64_t b = queue.subscribe();
  queue.push("news", {{"n", 2}});
  EXPECT_EQ(queue.read(a, 0ms).text, EventQueue::frame("news", {{"n", 1}}) + EventQueue::frame("news", {{"n", 2}}));
  EXPECT_EQ(queue.read(b, 0ms).text, EventQueue::frame("news", {{"n", 2}}));
  EXPECT_EQ(queue.read(a, 0ms).text, "");
  queue.close();
  EXPECT_TRUE(queue.read(a, 0ms).ended);
  queue.unsubscribe(a);
  queue.unsubscribe(b);
  EXPECT_EQ(queue.readers(), 0u);
}

TEST(EventQueue, AnUnsubscribedReaderEnds) {
  EventQueue queue;
  uint64_t a = queue.subscribe();
  queue.unsubscribe(a);
  EXPECT_TRUE(queue.read(a, 0ms).ended);
}

}  // namespace
}  // namespace nk::ui
