#include "event_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "wire/compact_events.h"

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

// The same, with fields that differ little from one event to the next, as
// a program's do: a few bytes each, so a ring holds its whole capacity.
TaskEventRecord smallEventWithId(uint64_t id) {
  return {static_cast<TaskEventType>(id % 9), {}, id * 3 + 1, id, id + 1, 2 * id, id % 3};
}

std::vector<TaskEventRecord> decoded(const EventRing::Part& part) {
  std::vector<TaskEventRecord> records;
  const std::string fault = wire::CompactEvents::decode(wire::CompactEvents::Split{part.headers, part.values}, records,
                                                        wire::CompactEvents::kMaxRecordsPerPart);
  EXPECT_EQ(fault, "");
  EXPECT_EQ(records.size(), part.records);
  return records;
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

// What a record carries besides its fields (the reserved bytes, garbage
// here) is never encoded: the events come back with zeros there, and every
// field as it was pushed, by record or field by field.
TEST(EventRing, OnlyTheFieldsOfAnEventAreKept) {
  EventRing ring(4, Mode::kLossy);
  std::vector<TaskEventRecord> out(4);
  TaskEventRecord dirty = eventWithId(11);
  std::memset(dirty.reserved, 0xAB, sizeof dirty.reserved);
  ASSERT_TRUE(ring.push(dirty));
  const TaskEventRecord e = eventWithId(12);
  ASSERT_TRUE(ring.push(e.type, e.timestamp_ns, e.task_id, e.a, e.b, e.c));
  ASSERT_EQ(ring.drain(out), 2u);
  for (uint64_t i = 0; i < 2; ++i) {
    expectIsEventWithId(out[i], 11 + i);
    const TaskEventRecord expected = eventWithId(11 + i);
    EXPECT_EQ(std::memcmp(&out[i], &expected, sizeof expected), 0) << "a byte besides the fields came back";
  }
}

TEST(EventRing, DrainOfAnEmptyRingReturnsNothing) {
  EventRing ring(8, Mode::kLossless);
  std::vector<TaskEventRecord> out(8);
  EXPECT_EQ(ring.drain(out), 0u);
}

TEST(EventRing, DrainIntoAnEmptySpanLeavesEventsQueued) {
  EventRing ring(8, Mode::kLossless);
  ASSERT_TRUE(ring.push(eventWithId(1)));
  EXPECT_EQ(ring.drain(std::span<TaskEventRecord>{}), 0u);
  std::vector<TaskEventRecord> out(8);
  ASSERT_EQ(ring.drain(out), 1u);
  expectIsEventWithId(out[0], 1);
}

TEST(EventRing, SingleThreadedPushAndDrainKeepOrderAndContent) {
  EventRing ring(16, Mode::kLossless);
  for (uint64_t id = 0; id < 10; ++id) {
    ASSERT_TRUE(ring.push(eventWithId(id)));
  }

  std::vector<TaskEventRecord> out(4);
  ASSERT_EQ(ring.drain(out), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    expectIsEventWithId(out[i], i);
  }

  out.resize(32);
  ASSERT_EQ(ring.drain(out), 6u);
  for (uint64_t i = 0; i < 6; ++i) {
    expectIsEventWithId(out[i], 4 + i);
  }
  EXPECT_EQ(ring.drain(out), 0u);
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
    for (int i = 0; i < batch && next_push - next_expected < ring.capacity(); ++i) {
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
  ASSERT_GT(ring.blockRecords(), 1u);
  int rejected = 0;
  for (uint64_t id = 0; id < capacity + 5; ++id) {
    if (!ring.push(smallEventWithId(id))) {
      ++rejected;
    }
  }
  EXPECT_EQ(rejected, 5);
  EXPECT_EQ(ring.dropped(), 5u);

  std::vector<TaskEventRecord> out(capacity + 5);
  ASSERT_EQ(ring.drain(out), capacity);
  for (uint64_t i = 0; i < capacity; ++i) {
    const TaskEventRecord expected = smallEventWithId(i);
    EXPECT_EQ(std::memcmp(&out[i], &expected, sizeof expected), 0) << i;
  }
}

// A block whose varints run past the room allowed for them closes early:
// the ring then holds fewer events than its capacity, and drops (lossy) or
// waits (lossless) sooner, but loses none it took.
TEST(EventRing, EventsOfWideFieldsFillItsBlocksSooner) {
  EventRing ring(64, Mode::kLossy);
  // Fields unlike the last event's: ten bytes of varint each.
  auto wide = [](uint64_t id) {
    return TaskEventRecord{TaskEventType::kDependence, {}, id, ~id * 0x9e3779b97f4a7c15ull, id * 0xbf58476d1ce4e5b9ull,
                           ~id * 0x94d049bb133111ebull, id * 0xd6e8feb86659fd93ull};
  };
  std::vector<TaskEventRecord> pushed;
  for (uint64_t id = 0; id < ring.capacity(); ++id)
    if (ring.push(wide(id))) pushed.push_back(wide(id));
  EXPECT_LT(pushed.size(), ring.capacity());
  EXPECT_EQ(ring.dropped(), ring.capacity() - pushed.size());
  std::vector<TaskEventRecord> out(ring.capacity());
  ASSERT_EQ(ring.drain(out), pushed.size());
  for (size_t i = 0; i < pushed.size(); ++i) EXPECT_EQ(std::memcmp(&out[i], &pushed[i], sizeof out[i]), 0) << i;
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

// What the library's exit line reports: how long a lossless producer waited
// for room, from its push to the drain that made room, summed over its
// waits; nothing while there is room, nothing in lossy mode.
TEST(EventRing, ALosslessProducerAddsUpTheTimeItWaitedForRoom) {
  // Drained only once the producer has found the ring full (on_full runs on
  // its thread just before it waits): on a busy host a producer thread may
  // start its push long after a fixed sleep.
  std::atomic<bool> found_full{false};
  RingStallPolicy policy;
  policy.on_full = [&] { found_full.store(true); };
  EventRing ring(4, Mode::kLossless, policy);
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  EXPECT_EQ(ring.waited().count(), 0);
  std::vector<TaskEventRecord> out(1);
  std::chrono::nanoseconds pushes_took{0};
  for (uint64_t id = 4; id < 6; ++id) {
    found_full.store(false);
    std::thread producer([&] {
      const auto began = std::chrono::steady_clock::now();
      EXPECT_TRUE(ring.push(eventWithId(id)));
      pushes_took += std::chrono::steady_clock::now() - began;
    });
    while (!found_full.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto before = ring.waited();
    ASSERT_EQ(ring.drain(out), 1u);
    producer.join();
    EXPECT_GT(ring.waited(), before) << "wait " << id - 3;
  }
  // Never more than the pushes themselves took.
  EXPECT_LE(ring.waited(), pushes_took);

  EventRing lossy(4, Mode::kLossy);
  for (uint64_t id = 0; id < 6; ++id) lossy.push(eventWithId(id));
  EXPECT_EQ(lossy.dropped(), 2u);
  EXPECT_EQ(lossy.waited().count(), 0);
}

// A sealed block goes as it lies: the compact part a fresh encoding of its
// events makes, so the shipper sends the ring's bytes; once taken, its
// room is free again.
TEST(EventRing, ASealedBlockGoesWholeAsTheCompactPartOfItsEvents) {
  EventRing ring(64, Mode::kLossy);
  const size_t block = ring.blockRecords();
  ASSERT_EQ(block, 8u);
  for (uint64_t id = 0; id < block + 3; ++id) ASSERT_TRUE(ring.push(smallEventWithId(id)));
  std::vector<EventRing::Part> parts;
  std::vector<std::vector<TaskEventRecord>> records;
  const size_t n = ring.consume(64, EventRing::OpenBlock::kTakeWhenOld, [&](const EventRing::Part& p) {
    parts.push_back(p);
    records.push_back(decoded(p));
  });
  ASSERT_EQ(n, block) << "the open block is too young to go";
  ASSERT_EQ(parts.size(), 1u);
  std::vector<TaskEventRecord> expected;
  for (uint64_t id = 0; id < block; ++id) expected.push_back(smallEventWithId(id));
  std::string headers, values;
  wire::CompactEvents::encode(expected, {}, headers, values);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(parts[0].headers.data()), parts[0].headers.size()), headers);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(parts[0].values.data()), parts[0].values.size()), values);
  // The open block's three go when asked for, and then nothing is left.
  std::vector<TaskEventRecord> rest;
  EXPECT_EQ(ring.consume(64, EventRing::OpenBlock::kTake,
                         [&](const EventRing::Part& p) { rest = decoded(p); }),
            3u);
  ASSERT_EQ(rest.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(rest[i].task_id, block + i);
  EXPECT_EQ(ring.consume(64, EventRing::OpenBlock::kTake,
                         [](const EventRing::Part&) { ADD_FAILURE() << "an empty ring has nothing to hand"; }),
            0u);
}

// The open block waits for kOpenPatience, then goes; what the producer adds
// to it after goes as a part of its own that decodes on its own, and so
// does the rest once the block is sealed.
TEST(EventRing, AnOpenBlockGoesOnceOldAndItsRestAfterwardsAsPartsOfTheirOwn) {
  EventRing ring(64, Mode::kLossless);
  const size_t block = ring.blockRecords();
  for (uint64_t id = 0; id < 3; ++id) ASSERT_TRUE(ring.push(smallEventWithId(id)));
  std::vector<TaskEventRecord> got;
  auto collect = [&](const EventRing::Part& p) {
    const std::vector<TaskEventRecord> part = decoded(p);
    got.insert(got.end(), part.begin(), part.end());
  };
  EXPECT_EQ(ring.consume(64, EventRing::OpenBlock::kTakeWhenOld, collect), 0u);
  std::this_thread::sleep_for(EventRing::kOpenPatience + std::chrono::milliseconds(1));
  EXPECT_EQ(ring.consume(64, EventRing::OpenBlock::kTakeWhenOld, collect), 3u);
  for (uint64_t id = 3; id < 5; ++id) ASSERT_TRUE(ring.push(smallEventWithId(id)));
  EXPECT_EQ(ring.consume(64, EventRing::OpenBlock::kTakeWhenOld, collect), 2u);
  for (uint64_t id = 5; id < block + 2; ++id) ASSERT_TRUE(ring.push(smallEventWithId(id)));  // seals it
  EXPECT_EQ(ring.consume(64, EventRing::OpenBlock::kTake, collect), block - 3);
  ASSERT_EQ(got.size(), block + 2);
  for (uint64_t i = 0; i < got.size(); ++i) {
    const TaskEventRecord expected = smallEventWithId(i);
    EXPECT_EQ(std::memcmp(&got[i], &expected, sizeof expected), 0) << i;
  }
}

// Everything so far, open block included, goes unread. The block that was
// open is freed once the producer has sealed it and the consumer looks
// again; until then the ring holds a block's events fewer.
TEST(EventRing, DiscardEmptiesTheRingUnread) {
  EventRing ring(64, Mode::kLossy);
  const size_t block = ring.blockRecords();
  for (uint64_t id = 0; id < 20; ++id) ASSERT_TRUE(ring.push(smallEventWithId(id)));
  EXPECT_EQ(ring.discard(), 20u);
  EXPECT_EQ(ring.discard(), 0u);
  uint64_t id = 20;
  for (; id % block != 0; ++id) ASSERT_TRUE(ring.push(smallEventWithId(id)));  // fills the discarded open block
  for (size_t i = 0; i < ring.capacity() - block; ++i, ++id) EXPECT_TRUE(ring.push(smallEventWithId(id))) << id;
  EXPECT_FALSE(ring.push(smallEventWithId(id)));
  std::vector<TaskEventRecord> out(ring.capacity());
  const size_t drained = ring.drain(out);
  ASSERT_EQ(drained, ring.capacity() - block + (24 - 20));
  EXPECT_EQ(out[0].task_id, 20u);
  EXPECT_EQ(out[drained - 1].task_id, id - 1);
}

// A consumer that sleeps between looks is called the moment the producer
// finds the ring full, not when its own interval is up; a producer with
// room never calls it.
TEST(EventRing, AFullRingCallsOnTheConsumerBeforeItsProducerWaits) {
  std::atomic<int> calls{0};
  std::atomic<EventRing*> to_drain{nullptr};
  std::vector<TaskEventRecord> drained(8);
  size_t drained_count = 0;
  std::thread consumer;
  EventRing::StallPolicy policy;
  policy.on_full = [&] {
    ++calls;
    // As TaskShipper::wake would: the consumer goes at once.
    consumer = std::thread([&] { drained_count = to_drain.load()->drain(drained); });
  };
  EventRing ring(4, Mode::kLossless, policy);
  to_drain = &ring;
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  EXPECT_EQ(calls.load(), 0);
  // Without the call nothing would ever drain: this push would wait out
  // the stall limit (10 s) and drop the event.
  ASSERT_TRUE(ring.push(eventWithId(4)));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(ring.dropped(), 0u);
  consumer.join();
  // The consumer's drain may have taken the fifth too, as it came.
  std::vector<TaskEventRecord> rest(8);
  const size_t n = ring.drain(rest);
  ASSERT_GE(drained_count, 4u);
  ASSERT_EQ(drained_count + n, 5u);
  drained.resize(drained_count);
  drained.insert(drained.end(), rest.begin(), rest.begin() + static_cast<ptrdiff_t>(n));
  for (uint64_t id = 0; id < 5; ++id) expectIsEventWithId(drained[id], id);
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

// A fake clock for the stall tests: every read moves it a quarter second
// on, so the producer's wait is counted in reads, not in real time. A read
// may also stand in for the daemon taking a write (the shipper's progress)
// or for the shipper draining the ring: what happens between two reads.
struct FakeDaemon {
  std::atomic<int> reads{0};
  std::atomic<int> progress_until_read{0};  // bumps `progress` at each read before this one
  std::atomic<int> drain_at_read{-1};       // the consumer drains at this read
  std::atomic<bool> drained{false};         // and has
  std::atomic<uint64_t> progress{0};
};
FakeDaemon* g_fake = nullptr;
std::atomic<int> g_stall_calls{0};

std::chrono::steady_clock::time_point fakeNow() {
  int read = ++g_fake->reads;
  if (read < g_fake->progress_until_read) ++g_fake->progress;
  // The clock stands still from the consumer's read until it has drained: a
  // consumer thread the host ran late must not look like a stalled daemon.
  const int drain_at = g_fake->drain_at_read.load();
  while (drain_at >= 0 && read >= drain_at && !g_fake->drained.load()) std::this_thread::yield();
  return std::chrono::steady_clock::time_point(std::chrono::milliseconds(250) * read);
}

class EventRingStall : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fake = &fake_;
    g_stall_calls = 0;
  }
  void TearDown() override { g_fake = nullptr; }

  // A 1 s limit: four reads of the fake clock without progress.
  RingStallPolicy policy() {
    RingStallPolicy p;
    p.limit = std::chrono::seconds(1);
    p.progress = &fake_.progress;
    p.on_stall = [] { ++g_stall_calls; };
    p.now = &fakeNow;
    return p;
  }

  // The consumer, on its own thread: drains `count` events once the
  // producer's clock has been read `at_read` times, or once the producer
  // gave up waiting (pushDone()), so that a failing test ends.
  std::thread consumerDrainingAt(EventRing& ring, int at_read, size_t count, std::vector<TaskEventRecord>& out) {
    push_done_ = false;
    fake_.drained = false;
    fake_.drain_at_read = at_read;
    return std::thread([&ring, &out, at_read, count, this] {
      while (fake_.reads.load() < at_read && !push_done_.load()) std::this_thread::yield();
      out.resize(count);
      out.resize(ring.drain(out));
      fake_.drained = true;
    });
  }
  bool pushDone(bool pushed) {
    push_done_ = true;
    return pushed;
  }

  FakeDaemon fake_;
  std::atomic<bool> push_done_{false};
};

// The 23% loss: a daemon that takes writes slowly held the
// shipper in a write for more than the limit, and the producer dropped.
// Progress elsewhere than the ring's tail keeps it waiting, for 10 s of
// fake time against a 1 s limit, until the ring has room.
TEST_F(EventRingStall, LosslessProducerWaitsWhileTheDaemonMakesProgress) {
  EventRing ring(4, Mode::kLossless, policy());
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  fake_.progress_until_read = 40;
  std::vector<TaskEventRecord> drained;
  std::thread consumer = consumerDrainingAt(ring, 40, 2, drained);
  EXPECT_TRUE(pushDone(ring.push(eventWithId(4))));
  consumer.join();
  EXPECT_GE(fake_.reads.load(), 40);
  EXPECT_EQ(ring.dropped(), 0u);
  EXPECT_EQ(ring.stalls(), 0u);
  EXPECT_EQ(g_stall_calls.load(), 0);
  ASSERT_EQ(drained.size(), 2u);
  expectIsEventWithId(drained[0], 0);
  std::vector<TaskEventRecord> rest(8);
  ASSERT_EQ(ring.drain(rest), 3u);
  expectIsEventWithId(rest[2], 4);
}

// No progress at all for the limit: the producer drops (counted), says so
// once, and while nothing moves drops at once, without waiting or even
// reading the clock again.
TEST_F(EventRingStall, LosslessProducerDropsOnlyAfterTheLimitWithoutProgress) {
  EventRing ring(4, Mode::kLossless, policy());
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  EXPECT_FALSE(ring.push(eventWithId(4)));
  // The first read starts the wait; the limit is four reads later.
  EXPECT_EQ(fake_.reads.load(), 5);
  EXPECT_GT(ring.waited().count(), 0) << "the wait before the drop is time waited too";
  EXPECT_EQ(ring.stalls(), 1u);
  EXPECT_EQ(ring.dropped(), 1u);
  EXPECT_EQ(g_stall_calls.load(), 1);
  EXPECT_FALSE(ring.push(eventWithId(5)));
  EXPECT_FALSE(ring.push(eventWithId(6)));
  EXPECT_EQ(fake_.reads.load(), 5) << "a stalled producer waited again";
  EXPECT_EQ(ring.dropped(), 3u);
  EXPECT_EQ(ring.stalls(), 1u);
  EXPECT_EQ(g_stall_calls.load(), 1);
}

// Progress breaks a stall even when the ring is still full (the daemon
// took a write; the shipper will drain next): the producer waits again,
// and a later drain lets the event in.
TEST_F(EventRingStall, ProgressAfterAStallMakesTheProducerWaitAgain) {
  EventRing ring(4, Mode::kLossless, policy());
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  EXPECT_FALSE(ring.push(eventWithId(4)));
  ASSERT_EQ(ring.stalls(), 1u);
  ++fake_.progress;
  fake_.progress_until_read = 30;
  std::vector<TaskEventRecord> drained;
  std::thread consumer = consumerDrainingAt(ring, 30, 1, drained);
  EXPECT_TRUE(pushDone(ring.push(eventWithId(5))));
  consumer.join();
  EXPECT_EQ(ring.dropped(), 1u);
  EXPECT_EQ(ring.stalls(), 1u);
  std::vector<TaskEventRecord> rest(8);
  ASSERT_EQ(ring.drain(rest), 4u);
  expectIsEventWithId(rest[0], 1);
  expectIsEventWithId(rest[3], 5);
}

// Without a progress counter (the ring alone), only the tail is progress:
// a drain, however late, ends a stall.
TEST_F(EventRingStall, TheTailAloneIsProgressWithoutACounter) {
  RingStallPolicy p = policy();
  p.progress = nullptr;
  EventRing ring(4, Mode::kLossless, p);
  for (uint64_t id = 0; id < 4; ++id) ASSERT_TRUE(ring.push(eventWithId(id)));
  fake_.progress_until_read = 1000;  // moves a counter the ring does not watch
  EXPECT_FALSE(ring.push(eventWithId(4)));
  EXPECT_EQ(ring.stalls(), 1u);
  std::vector<TaskEventRecord> out(2);
  ASSERT_EQ(ring.drain(out), 2u);
  EXPECT_TRUE(ring.push(eventWithId(5)));
  EXPECT_TRUE(ring.push(eventWithId(6)));
  EXPECT_EQ(ring.dropped(), 1u);
}

}  // namespace
}  // namespace nk::client
