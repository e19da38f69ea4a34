#include "event_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace nk::client {
namespace {

using Mode = EventRing::Mode;

// Every field derived from the id, so a torn or misplaced copy shows up.
TaskEventRecord eventWithId(uint64_t id) {
  TaskEventRecord event{};
  event.type = static_cast<TaskEventType>(id % 9);
  event.timestamp_ns = id * 3 + 1;
  event.task_id = id;
  event.a = id ^ 0x5555'5555'5555'5555ULL;
  event.b = ~id;
  event.c = id * 7;
  return event;
}

void expectIsEventWithId(const TaskEventRecord& event, uint64_t id) {
  const TaskEventRecord expected = eventWithId(id);
  EXPECT_EQ(event.type, expected.type) << "id " << id;
  EXPECT_EQ(event.timestamp_ns, expected.timestamp_ns) << "id " << id;
  EXPECT_EQ(event.task_id, expected.task_id) << "id " << id;
  EXPECT_EQ(event.a, expected.a) << "id " << id;
  EXPECT_EQ(event.b, expected.b) << "id " << id;
  EXPECT_EQ(event.c, expected.c) << "id " << id;
}

TEST(EventRing, CapacityRoundsUpToAPowerOfTwoOfAtLeastTwo) {
  EXPECT_EQ(EventRing(0, Mode::kLossy).capacity(), 2u);
  EXPECT_EQ(EventRing(1, Mode::kLossy).capacity(), 2u);
  EXPECT_EQ(EventRing(2, Mode::kLossy).capacity(), 2u);
  EXPECT_EQ(EventRing(3, Mode::kLossy).capacity(), 4u);
  EXPECT_EQ(EventRing(1000, Mode::kLossless).capacity(), 1024u);
  EXPECT_EQ(EventRing(1024, Mode::kLossless).capacity(), 1024u);
  EXPECT_EQ(EventRing(1025, Mode::kLossless).capacity(), 2048u);
}

TEST(EventRing, RoundedUpCapacityIsUsable) {
  EventRing ring(5, Mode::kLossy);
  ASSERT_EQ(ring.capacity(), 8u);
  for (uint64_t id = 0; id < 8; ++id) {
    EXPECT_TRUE(ring.push(eventWithId(id)));
  }
  EXPECT_FALSE(ring.push(eventWithId(8)));
}

TEST(EventRing, DrainOfAnEmptyRingReturnsNothing) {
  EventRing ring(8, Mode::kLossless);
  std::vector<TaskEventRecord> out(8);
  EXPECT_EQ(ring.drain(out), 0u);
  EXPECT_EQ(ring.sizeApprox(), 0u);
}

TEST(EventRing, DrainIntoAnEmptySpanLeavesEventsQueued) {
  EventRing ring(8, Mode::kLossless);
  ASSERT_TRUE(ring.push(eventWithId(1)));
  EXPECT_EQ(ring.drain(std::span<TaskEventRecord>{}), 0u);
  EXPECT_EQ(ring.sizeApprox(), 1u);
}

TEST(EventRing, SingleThreadedPushAndDrainKeepOrderAndContent) {
  EventRing ring(16, Mode::kLossless);
  for (uint64_t id = 0; id < 10; ++id) {
    ASSERT_TRUE(ring.push(eventWithId(id)));
  }
  EXPECT_EQ(ring.sizeApprox(), 10u);

  std::vector<TaskEventRecord> out(4);
  ASSERT_EQ(ring.drain(out), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    expectIsEventWithId(out[i], i);
  }
  EXPECT_EQ(ring.sizeApprox(), 6u);

  out.resize(32);
  ASSERT_EQ(ring.drain(out), 6u);
  for (uint64_t i = 0; i < 6; ++i) {
    expectIsEventWithId(out[i], 4 + i);
  }
  EXPECT_EQ(ring.sizeApprox(), 0u);
  EXPECT_EQ(ring.dropped(), 0u);
}

// Odd batch sizes make drains straddle the end of the slot array in every
// possible position.
TEST(EventRing, OrderSurvivesManyWrapArounds) {
  EventRing ring(8, Mode::kLossy);
  std::vector<TaskEventRecord> out(3);
  uint64_t next_push = 0;
  uint64_t next_expected = 0;
  for (int round = 0; round < 1000; ++round) {
    const int batch = 1 + round % 8;
    for (int i = 0; i < batch && ring.sizeApprox() < ring.capacity(); ++i) {
      ASSERT_TRUE(ring.push(eventWithId(next_push++)));
    }
    const size_t drained = ring.drain(out);
    for (size_t i = 0; i < drained; ++i) {
      expectIsEventWithId(out[i], next_expected++);
    }
  }
  std::vector<TaskEventRecord> rest(8);
  const size_t drained = ring.drain(rest);
  for (size_t i = 0; i < drained; ++i) {
    expectIsEventWithId(rest[i], next_expected++);
  }
  EXPECT_EQ(next_expected, next_push);
  EXPECT_EQ(ring.dropped(), 0u);
}

TEST(EventRing, LossyModeDropsAndCountsWhenFullAndKeepsTheFirstEvents) {
  EventRing ring(64, Mode::kLossy);
  const size_t capacity = ring.capacity();
  int rejected = 0;
  for (uint64_t id = 0; id < capacity + 5; ++id) {
    if (!ring.push(eventWithId(id))) {
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, 5);
  EXPECT_EQ(ring.dropped(), 5u);
  EXPECT_EQ(ring.sizeApprox(), capacity);

  std::vector<TaskEventRecord> out(capacity + 5);
  ASSERT_EQ(ring.drain(out), capacity);
  for (uint64_t i = 0; i < capacity; ++i) {
    expectIsEventWithId(out[i], i);
  }
}

TEST(EventRing, LossyModeAcceptsAgainAfterADrain) {
  EventRing ring(4, Mode::kLossy);
  for (uint64_t id = 0; id < 4; ++id) {
    ASSERT_TRUE(ring.push(eventWithId(id)));
  }
  EXPECT_FALSE(ring.push(eventWithId(99)));
  std::vector<TaskEventRecord> out(1);
  ASSERT_EQ(ring.drain(out), 1u);
  EXPECT_TRUE(ring.push(eventWithId(4)));
  EXPECT_EQ(ring.dropped(), 1u);

  out.resize(4);
  ASSERT_EQ(ring.drain(out), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    expectIsEventWithId(out[i], i + 1);
  }
}

TEST(EventRing, LosslessPushWaitsWhileFullAndCompletesAfterADrain) {
  EventRing ring(4, Mode::kLossless);
  for (uint64_t id = 0; id < 4; ++id) {
    ASSERT_TRUE(ring.push(eventWithId(id)));
  }
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(ring.push(eventWithId(4)));
    pushed.store(true);
  });
  // Cannot pass by luck: a push that does not wait finishes long before.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(pushed.load());

  std::vector<TaskEventRecord> out(1);
  ASSERT_EQ(ring.drain(out), 1u);
  expectIsEventWithId(out[0], 0);
  producer.join();
  EXPECT_TRUE(pushed.load());

  out.resize(8);
  ASSERT_EQ(ring.drain(out), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    expectIsEventWithId(out[i], i + 1);
  }
  EXPECT_EQ(ring.dropped(), 0u);
}

TEST(EventRing, LosslessModeDeliversEveryEventOnceInOrderAcrossThreads) {
  constexpr uint64_t kEvents = 2'000'000;
  EventRing ring(1024, Mode::kLossless);
  std::thread producer([&] {
    for (uint64_t id = 0; id < kEvents; ++id) {
      ring.push(eventWithId(id));
    }
  });

  // Small, odd batch so drains land at every offset of the ring.
  std::vector<TaskEventRecord> out(97);
  uint64_t next_expected = 0;
  uint64_t mismatches = 0;
  while (next_expected < kEvents) {
    const size_t drained = ring.drain(out);
    for (size_t i = 0; i < drained; ++i) {
      const TaskEventRecord expected = eventWithId(next_expected);
      // One comparison per event, one assertion at the end: gtest per event
      // would dominate the run time.
      if (out[i].task_id != expected.task_id || out[i].timestamp_ns != expected.timestamp_ns ||
          out[i].a != expected.a || out[i].b != expected.b || out[i].c != expected.c ||
          out[i].type != expected.type) {
        ++mismatches;
      }
      ++next_expected;
    }
    if (drained == 0) {
      std::this_thread::yield();
    }
  }
  producer.join();

  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(next_expected, kEvents);
  EXPECT_EQ(ring.drain(out), 0u) << "more events than were pushed";
  EXPECT_EQ(ring.dropped(), 0u);
}

TEST(EventRing, LossyModeAccountsForEveryEventAcrossThreads) {
  constexpr uint64_t kEvents = 1'000'000;
  EventRing ring(256, Mode::kLossy);
  std::atomic<bool> producer_done{false};
  uint64_t producer_rejects = 0;
  std::thread producer([&] {
    for (uint64_t id = 0; id < kEvents; ++id) {
      if (!ring.push(eventWithId(id))) {
        ++producer_rejects;
      }
    }
    producer_done.store(true, std::memory_order_release);
  });

  std::vector<TaskEventRecord> out(64);
  uint64_t received = 0;
  uint64_t last_id = 0;
  bool strictly_increasing = true;
  bool content_intact = true;
  auto consume = [&](size_t drained) {
    for (size_t i = 0; i < drained; ++i) {
      const uint64_t id = out[i].task_id;
      if (received > 0 && id <= last_id) {
        strictly_increasing = false;
      }
      const TaskEventRecord expected = eventWithId(id);
      if (out[i].timestamp_ns != expected.timestamp_ns || out[i].a != expected.a ||
          out[i].b != expected.b || out[i].c != expected.c || out[i].type != expected.type) {
        content_intact = false;
      }
      last_id = id;
      ++received;
    }
  };
  while (!producer_done.load(std::memory_order_acquire)) {
    consume(ring.drain(out));
  }
  producer.join();
  for (size_t drained; (drained = ring.drain(out)) > 0;) {
    consume(drained);
  }

  EXPECT_TRUE(strictly_increasing);
  EXPECT_TRUE(content_intact);
  EXPECT_EQ(ring.dropped(), producer_rejects);
  EXPECT_EQ(received + ring.dropped(), kEvents);
  EXPECT_GT(received, 0u);
}

std::atomic<int> g_stall_calls{0};
void countStall() { g_stall_calls.fetch_add(1); }

// A consumer that takes nothing for the stall limit makes a lossless
// producer drop (counted) instead of waiting forever, and without waiting
// again while it stays stuck; once it drains, events are kept again.
TEST(EventRing, LosslessProducerStopsWaitingForAStalledConsumer) {
  g_stall_calls = 0;
  EventRing ring(4, Mode::kLossless, {std::chrono::milliseconds(50), &countStall});
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ring.push(eventWithId(4)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(50));
  EXPECT_EQ(ring.stalls(), 1u);
  EXPECT_EQ(g_stall_calls.load(), 1);
  EXPECT_FALSE(ring.push(eventWithId(5)));  // still stuck: dropped at once
  EXPECT_EQ(ring.dropped(), 2u);
  EXPECT_EQ(g_stall_calls.load(), 1);

  std::vector<TaskEventRecord> out(2);
  ASSERT_EQ(ring.drain(out), 2u);
  expectIsEventWithId(out[0], 0);
  EXPECT_TRUE(ring.push(eventWithId(6)));
  EXPECT_TRUE(ring.push(eventWithId(7)));
  out.resize(4);
  ASSERT_EQ(ring.drain(out), 4u);
  expectIsEventWithId(out[0], 2);
  expectIsEventWithId(out[1], 3);
  expectIsEventWithId(out[2], 6);
  expectIsEventWithId(out[3], 7);
  EXPECT_EQ(ring.stalls(), 1u);
}

}  // namespace
}  // namespace nk::client
