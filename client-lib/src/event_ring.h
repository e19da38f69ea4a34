#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>

#include "wire/task_event_record.h"

namespace nk::client {

// The client library speaks the shared wire record in its own namespace.
using wire::TaskEventRecord;
using wire::TaskEventType;

// Lossless, but the app must not hang on a daemon that stopped: a full
// ring's producer waits as long as the consumer side makes progress, and
// drops events (counted) only once it has made none for `limit`, until it
// moves again. Progress is the ring's own tail moving, or `progress`
// changing: the shipper bumps it each time the daemon takes a write, so a
// shipper held for seconds in a write to a slow daemon still counts as
// moving. `on_stall` runs on the producer's thread when a spell of dropping
// begins; `now` is the clock (tests pass a fake one). (Outside EventRing:
// GCC cannot take a nested struct's member initialisers in the class's own
// default argument.)
struct RingStallPolicy {
  std::chrono::milliseconds limit{10000};
  const std::atomic<uint64_t>* progress = nullptr;
  std::function<void()> on_stall;
  // Runs on the producer's thread when it finds the ring full, before it
  // waits: a consumer that only looks every few milliseconds must not let
  // the producer sleep that long (a 2048-slot ring ran 20 times slower).
  std::function<void()> on_full;
  std::chrono::steady_clock::time_point (*now)() = [] { return std::chrono::steady_clock::now(); };
};

// Bounded single-producer single-consumer queue of task events. Each
// application thread owns one ring and is its only producer; the shipping
// thread is its only consumer. Nothing here is shared between application
// threads, so the hot path takes no lock and no contended atomic.
//
// Indices grow without wrapping (2^64 events is centuries at any event
// rate) and are masked into the slot array, so full and empty are told
// apart without sacrificing a slot.
class EventRing {
 public:
  enum class Mode {
    kLossless,  // the producer waits when the ring is full
    kLossy,     // the event is dropped and counted; never waits
  };

  using StallPolicy = RingStallPolicy;

  // `capacity` is rounded up to a power of two (at least 2) so indexing is
  // a mask instead of a division.
  EventRing(size_t capacity, Mode mode, StallPolicy stall = {});

  // Copying or moving would hand the other side a stale index.
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  // Producer thread only. Lossy: false (and one more drop) when full.
  // Lossless: waits for room; false (and one more drop) only while the
  // consumer side is stalled (see RingStallPolicy).
  bool push(const TaskEventRecord& event) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    // Only re-read the consumer's index when the cached one says full: in
    // steady state this keeps the consumer's cache line out of the
    // producer's path.
    if (head - cached_tail_ >= capacity_ && !refreshTailHasRoom(head)) {
      return pushWhenFull(event);
    }
    publish(head, event);
    return true;
  }

  // The same, the record given field by field and written straight into its
  // slot. A record built on the stack and then copied is read back with
  // 16-byte loads that span its 8-byte stores, which the core cannot forward
  // from its store buffer: a stall of some ten cycles per load, three per
  // event (task_capture_bench measures the difference).
  bool push(TaskEventType type, uint64_t timestamp_ns, uint64_t task_id, uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ >= capacity_ && !refreshTailHasRoom(head)) {
      return pushWhenFull(TaskEventRecord{type, {}, timestamp_ns, task_id, a, b, c});
    }
    TaskEventRecord& slot = slots_[head & mask_];
    // The type and the reserved bytes as one word, so that no byte of the
    // slot keeps an older event's value.
    const uint64_t first_word = static_cast<uint8_t>(type);
    std::memcpy(&slot, &first_word, sizeof first_word);
    slot.timestamp_ns = timestamp_ns;
    slot.task_id = task_id;
    slot.a = a;
    slot.b = b;
    slot.c = c;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  // Consumer thread only. Moves up to out.size() of the oldest events into
  // `out`, returns how many.
  size_t drain(std::span<TaskEventRecord> out);
  // Consumer thread only. Hands `take` up to `most` of the oldest events
  // where they lie, as two spans (the second is empty unless the ring wraps
  // there), then frees their slots; returns how many. `take` may change
  // them: they are the consumer's until it returns. What drain() copies out
  // is then read from the slots themselves (a ring bigger than the cache
  // costs a miss per line either way; a copy doubles the lines).
  template <typename Take>
  size_t consume(size_t most, Take&& take) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    uint64_t available = cached_head_ - tail;
    if (available < most) {
      // Acquire: pairs with publish(), so the slots are fully written.
      cached_head_ = head_.load(std::memory_order_acquire);
      available = cached_head_ - tail;
    }
    const size_t count = static_cast<size_t>(std::min<uint64_t>(available, most));
    if (count == 0) return 0;
    const size_t first = static_cast<size_t>(tail & mask_);
    const size_t before_wrap = std::min(count, capacity_ - first);
    take(std::span<TaskEventRecord>(&slots_[first], before_wrap),
         std::span<TaskEventRecord>(&slots_[0], count - before_wrap));
    released(tail + count);
    return count;
  }

  // Any thread; exact once the producer has stopped. Lossless rings drop
  // only while stalled (no progress for the policy's limit).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Spells of a consumer side that made no progress, any thread.
  uint64_t stalls() const { return stalls_.load(std::memory_order_relaxed); }
  // How long the producer has waited for room in all (lossless only): what
  // recording cost the program beyond its callbacks, any thread.
  std::chrono::nanoseconds waited() const {
    return std::chrono::nanoseconds(waited_ns_.load(std::memory_order_relaxed));
  }

  size_t capacity() const { return capacity_; }

  // Any thread; a snapshot that may already be stale when it returns.
  size_t sizeApprox() const;

  Mode mode() const { return mode_; }

 private:
  // 64 rather than std::hardware_destructive_interference_size: the latter
  // varies with -mtune and GCC warns when it is used in a header's ABI.
  static constexpr size_t kCacheLine = 64;

  // What moves when the consumer side makes progress.
  struct ConsumerMark {
    uint64_t tail = 0;
    uint64_t progress = 0;
    bool operator==(const ConsumerMark&) const = default;
  };
  ConsumerMark consumerMark() const;

  bool refreshTailHasRoom(uint64_t head);
  // The slots before `tail` are free again: the producer may reuse them
  // (and is woken if it sleeps for room).
  void released(uint64_t tail);
  bool pushWhenFull(const TaskEventRecord& event);
  void sleepUntilDrained(uint64_t head);
  void addWaited(std::chrono::steady_clock::time_point since);
  void drop() { dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  void publish(uint64_t head, const TaskEventRecord& event) {
    slots_[head & mask_] = event;
    // Release: the slot's contents are visible before the consumer can see
    // the new head.
    head_.store(head + 1, std::memory_order_release);
  }

  // Read-only after construction; shared by both sides without traffic.
  const size_t capacity_;
  const uint64_t mask_;
  const Mode mode_;
  const StallPolicy stall_;
  const std::unique_ptr<TaskEventRecord[]> slots_;

  // Producer's cache line: written by the producer, read by the consumer
  // only when its cached head runs out.
  alignas(kCacheLine) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  // An atomic so that dropped() from the shipper is race-free; only the
  // producer writes it, so a relaxed load+store (not a read-modify-write)
  // is enough.
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> stalls_{0};  // written by the producer only, as dropped_
  std::atomic<int64_t> waited_ns_{0};  // written by the producer only, as dropped_
  bool stalled_ = false;             // producer only
  ConsumerMark stalled_at_;          // producer only

  // Consumer's cache line. The class's alignment pads its end, so whatever
  // follows a ring in memory cannot share this line either.
  alignas(kCacheLine) std::atomic<uint64_t> tail_{0};
  uint64_t cached_head_ = 0;
  // 1 while the producer sleeps (a futex) for room: drain() wakes it. Here,
  // where the consumer looks at it on every drain; the producer writes it
  // only when the ring is full.
  std::atomic<uint32_t> sleeping_{0};
};

}  // namespace nk::client
