#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wire/compact_event_encoder.h"
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

// Bounded single-producer single-consumer queue of task events, held as the
// daemon takes them: the compact form (wire::CompactEvents), split. Each
// application thread owns one ring and is its only producer; the shipping
// thread is its only consumer. Nothing here is shared between application
// threads, so the hot path takes no lock and no contended atomic.
//
// The producer encodes each event as it happens, into blocks that each
// begin a compact part of their own, and the shipper sends a whole block's
// bytes as they lie. Encoding on the shipper instead (the ring held 48-byte
// records) cost more in all: on a UTS-shaped tree on 2 cores the shipper's
// pass over the records was a third of what recording cost, and the app's
// threads wrote ten times the bytes they now write, past their caches.
//
// Block indices grow without wrapping and are masked into the block array,
// so full and empty are told apart without sacrificing a block. The block
// the producer writes (the open one) is at the head; the consumer can take
// what it holds so far (consume's OpenBlock), and takes the rest later by
// decoding the block and encoding that rest as a part of its own.
class EventRing {
 public:
  enum class Mode {
    kLossless,  // the producer waits when the ring is full
    kLossy,     // the event is dropped and counted; never waits
  };

  using StallPolicy = RingStallPolicy;

  // Records a block holds at the most: a part of 4096 records is some
  // 17 KiB of a UTS-shaped program's events, so that a 256 KiB message
  // holds about 15 parts.
  static constexpr size_t kMaxBlockRecords = 4096;
  // Room in a block for each record's varints: a UTS-shaped program takes
  // 3 to 4 bytes a record, a dependence on a distant address some 15. A
  // block whose room runs out closes early, holding fewer records.
  static constexpr size_t kValueBytesPerRecord = 24;

  // Events as the daemon takes them: a compact part in the split form,
  // valid until the consumer's call returns.
  struct Part {
    std::span<const std::byte> headers;
    std::span<const std::byte> values;
    size_t records = 0;
  };

  // Whether consume() takes what the producer has put in its open block.
  enum class OpenBlock {
    kTake,  // yes: a drain, a stop, a debugger waiting for the events
    // Only once it has been open for kOpenPatience: at the app's full pace a
    // block closes within a millisecond and goes whole, while a block of a
    // slow thread still goes within the patience.
    kTakeWhenOld,
  };
  static constexpr auto kOpenPatience = std::chrono::milliseconds(5);

  // Room for `capacity` events (rounded up to a power of two, at least 2),
  // as blocks of up to kMaxBlockRecords: at least 8 blocks where the
  // capacity allows.
  EventRing(size_t capacity, Mode mode, StallPolicy stall = {});
  ~EventRing();

  // Copying or moving would hand the other side a stale index.
  EventRing(const EventRing&) = delete;
  EventRing& operator=(const EventRing&) = delete;

  // Producer thread only. Lossy: false (and one more drop) when full.
  // Lossless: waits for room; false (and one more drop) only while the
  // consumer side is stalled (see RingStallPolicy). The fields are a
  // TaskEventRecord's.
  [[gnu::always_inline]] bool push(TaskEventType type, uint64_t timestamp_ns, uint64_t task_id, uint64_t a, uint64_t b,
                                   uint64_t c) {
    if (header_at_ == headers_end_ || values_end_ - value_at_ < static_cast<ptrdiff_t>(kMaxRecordValueBytes))
        [[unlikely]] {
      if (!nextBlock()) return false;
    }
    value_at_ = encoder_.add(type, timestamp_ns, task_id, a, b, c, header_at_++, value_at_);
    // Release: the bytes are written before the consumer can see them
    // counted.
    fill_.store(open_fill_ | (static_cast<uint64_t>(header_at_ - headers_begin_) << kFillRecordsShift) |
                    static_cast<uint64_t>(value_at_ - values_begin_),
                std::memory_order_release);
    return true;
  }
  bool push(const TaskEventRecord& r) { return push(r.type, r.timestamp_ns, r.task_id, r.a, r.b, r.c); }

  // Consumer thread only. Hands `take` (a callable taking a const Part&)
  // up to `most` of the oldest events, as parts, oldest first; returns how
  // many. A whole block goes as it lies; the rest of a block the consumer
  // took part of goes as a part of its own.
  template <typename Take>
  size_t consume(size_t most, OpenBlock open, Take&& take) {
    size_t handed = 0;
    while (handed < most) {
      Span span;
      if (!nextSpan(open, span)) break;
      const size_t n = std::min(span.records - taken_, most - handed);
      take(part(span, n));
      handed += n;
      taken(span, n);
    }
    return handed;
  }
  // Consumer thread only. Up to out.size() of the oldest events decoded
  // into `out`, open block included; returns how many.
  size_t drain(std::span<TaskEventRecord> out);
  // Consumer thread only. Every event so far gone unread (nobody takes
  // them); returns how many.
  size_t discard();

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

  // Events the ring holds when each record's varints fit the room allowed
  // for them.
  size_t capacity() const { return blocks_ * block_records_; }
  size_t blockRecords() const { return block_records_; }

  Mode mode() const { return mode_; }

 private:
  // 64 rather than std::hardware_destructive_interference_size: the latter
  // varies with -mtune and GCC warns when it is used in a header's ABI.
  static constexpr size_t kCacheLine = 64;
  static constexpr size_t kMaxRecordValueBytes = wire::CompactEventEncoder::kMaxRecordValueBytes;
  // fill_: the open block's index (low 32 bits) in the high half, then its
  // records, then its value bytes.
  static constexpr int kFillRecordsShift = 18;
  static constexpr uint64_t kFillBlockMask = 0xffffffffull;  // and of the low half
  static constexpr uint64_t kFillValueMask = (uint64_t{1} << kFillRecordsShift) - 1;
  static_assert(kMaxBlockRecords * kValueBytesPerRecord + kMaxRecordValueBytes < (size_t{1} << kFillRecordsShift));
  static_assert(kMaxBlockRecords < (size_t{1} << (32 - kFillRecordsShift)));

  // What a closed block holds.
  struct Sealed {
    uint32_t records = 0;
    uint32_t value_bytes = 0;
  };
  // A block as the consumer finds it.
  struct Span {
    uint64_t block = 0;
    size_t records = 0;
    size_t value_bytes = 0;
    bool sealed = false;
  };

  // What moves when the consumer side makes progress.
  struct ConsumerMark {
    uint64_t tail = 0;
    uint64_t progress = 0;
    bool operator==(const ConsumerMark&) const = default;
  };
  ConsumerMark consumerMark() const;

  uint8_t* headersOf(uint64_t block) const { return storage_.get() + (block & mask_) * block_bytes_; }
  uint8_t* valuesOf(uint64_t block) const { return headersOf(block) + block_records_; }
  // Producer: `block` becomes the open one.
  void open(uint64_t block);
  static uint64_t takenMark(uint64_t block, size_t records) {
    return ((block & kFillBlockMask) << 32) | records;
  }
  // Producer: seals the open block and opens the next, once there is room.
  bool nextBlock();
  bool roomForNext(uint64_t head);
  bool waitForRoom(uint64_t head);
  void sleepUntilDrained(uint64_t head);
  void addWaited(std::chrono::steady_clock::time_point since);
  void drop() { dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  // Consumer: the oldest block with events not yet taken; false when there
  // is none (or only an open block `open` says to leave).
  bool nextSpan(OpenBlock open, Span& span);
  // Consumer: `n` events of `span` from the first not yet taken.
  Part part(const Span& span, size_t n);
  void taken(const Span& span, size_t n);
  // The slots before `tail` are free again: the producer may reuse them
  // (and is woken if it sleeps for room).
  void released(uint64_t tail);

  // Read-only after construction; shared by both sides without traffic.
  const size_t block_records_;
  const size_t blocks_;
  const uint64_t mask_;
  const size_t block_bytes_;
  const Mode mode_;
  const StallPolicy stall_;
  const std::unique_ptr<uint8_t[]> storage_;
  const std::unique_ptr<Sealed[]> sealed_;

  // Producer's cache line: written by the producer, read by the consumer
  // when it looks for more.
  alignas(kCacheLine) std::atomic<uint64_t> head_{0};  // the open block
  std::atomic<uint64_t> fill_{0};
  uint64_t cached_tail_ = 0;
  uint64_t open_fill_ = 0;  // the open block's index, where fill_ has it
  uint8_t* headers_begin_ = nullptr;
  uint8_t* header_at_ = nullptr;
  uint8_t* headers_end_ = nullptr;
  uint8_t* values_begin_ = nullptr;
  uint8_t* value_at_ = nullptr;
  uint8_t* values_end_ = nullptr;
  wire::CompactEventEncoder encoder_;
  // Atomics so that dropped() from the shipper is race-free; only the
  // producer writes them, so a relaxed load+store (not a read-modify-write)
  // is enough.
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> stalls_{0};
  std::atomic<int64_t> waited_ns_{0};
  bool stalled_ = false;             // producer only
  ConsumerMark stalled_at_;          // producer only

  // Consumer's cache line. The class's alignment pads its end, so whatever
  // follows a ring in memory cannot share this line either.
  alignas(kCacheLine) std::atomic<uint64_t> tail_{0};
  // What the consumer took of the open block (its index, low 32 bits, in
  // the high half; the records): a block taken whole while open is freed by
  // the producer as it seals it, so that the ring holds its capacity again
  // without waiting for the consumer's next look.
  std::atomic<uint64_t> open_taken_{~uint64_t{0}};
  uint64_t cached_head_ = 0;
  // Of the tail block's events, those already handed out; `taken_block_` is
  // the block they are of (the producer may free one it sealed).
  size_t taken_ = 0;
  uint64_t taken_block_ = 0;
  // The open block the consumer last left, and since when.
  uint64_t open_seen_ = ~uint64_t{0};
  std::chrono::steady_clock::time_point open_seen_at_{};
  // 1 while the producer sleeps (a futex) for room: released() wakes it.
  // Here, where the consumer looks at it on every release; the producer
  // writes it only when the ring is full.
  std::atomic<uint32_t> sleeping_{0};
  // A part re-encoded from a block taken in pieces, from the block decoded
  // (kept for the next piece).
  std::vector<TaskEventRecord> decoded_;
  uint64_t decoded_block_ = ~uint64_t{0};
  std::string part_headers_, part_values_;
};

}  // namespace nk::client
