#include "event_ring.h"

#include <algorithm>
#include <bit>
#include <optional>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include "wire/compact_event_writer.h"
#include "wire/compact_events.h"

namespace nk::client {

namespace {

// Beyond this a per-thread ring is a configuration mistake (16 Mi events is
// some 400 MiB per thread); clamping also keeps std::bit_ceil defined.
constexpr size_t kMaxCapacity = size_t{1} << 24;
// Blocks a ring has at the least (where its capacity allows): the consumer
// frees a block only once it has taken all of it.
constexpr size_t kMinBlocks = 8;

// Long enough to ride out a shipper that is mid-drain (a few microseconds);
// then the producer sleeps until a drain makes room. Yielding instead (as
// this once did, for a millisecond before sleeping) kept every waiting
// producer on a core: where producers outnumber cores they took them from
// the shipper and the daemon they were waiting for (UTS, 2 threads on 2
// cores: twice the CPU at a 64 Ki-event buffer, eight times at 8 Ki).
constexpr int kSpinsBeforeSleep = 256;
// A sleep ends at a drain, or after this to look at the stall limit (the
// shipper may be held in a write to a slow daemon, which is progress too).
constexpr auto kLongestSleep = std::chrono::milliseconds(1);

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

size_t roundedCapacity(size_t requested) { return std::bit_ceil(std::clamp<size_t>(requested, 2, kMaxCapacity)); }

size_t blockRecordsFor(size_t capacity) {
  return std::clamp<size_t>(capacity / kMinBlocks, 1, EventRing::kMaxBlockRecords);
}

// Tells the core this is a spin-wait: saves power and, with SMT, gives the
// sibling hyperthread (possibly the shipper) the pipeline.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace

EventRing::EventRing(size_t capacity, Mode mode, StallPolicy stall)
    : block_records_(blockRecordsFor(roundedCapacity(capacity))),
      blocks_(roundedCapacity(capacity) / block_records_),
      mask_(blocks_ - 1),
      // The headers, then room for the varints, the last record's whole.
      block_bytes_(block_records_ + block_records_ * kValueBytesPerRecord + kMaxRecordValueBytes),
      mode_(mode),
      stall_(stall),
      storage_(std::make_unique_for_overwrite<uint8_t[]>(blocks_ * block_bytes_)),
      sealed_(std::make_unique<Sealed[]>(blocks_)) {
  // Touched now, page by page (volatile, so not folded into a calloc that
  // leaves the pages unmapped): otherwise the producer takes a page fault
  // every few hundred events the first time round, on the app's time.
  auto* bytes = reinterpret_cast<volatile unsigned char*>(storage_.get());
  const size_t size = blocks_ * block_bytes_;
  for (size_t at = 0; at < size; at += 4096) bytes[at] = 0;
  open(0);
}

EventRing::~EventRing() = default;

void EventRing::open(uint64_t block) {
  headers_begin_ = header_at_ = headersOf(block);
  headers_end_ = headers_begin_ + block_records_;
  values_begin_ = value_at_ = valuesOf(block);
  values_end_ = values_begin_ + block_records_ * kValueBytesPerRecord + kMaxRecordValueBytes;
  encoder_.reset();  // a block is a part of its own
  open_fill_ = (block & kFillBlockMask) << 32;
  fill_.store(open_fill_, std::memory_order_release);
}

bool EventRing::roomForNext(uint64_t head) {
  // Acquire: the consumer's reads of the blocks it released are done before
  // we overwrite them.
  cached_tail_ = tail_.load(std::memory_order_acquire);
  return head + 1 - cached_tail_ < blocks_;
}

// Kept out of line so push()'s inlined fast path stays a handful of
// instructions.
bool EventRing::nextBlock() {
  const uint64_t head = head_.load(std::memory_order_relaxed);
  const auto records = static_cast<uint32_t>(header_at_ - headers_begin_);
  // Taken whole while open: the consumer's tail is at this block, and stays
  // there until it is sealed, so the next one is free. Acquire: the
  // consumer's reads of it are done.
  bool taken_whole = open_taken_.load(std::memory_order_acquire) == takenMark(head, records);
  if (!taken_whole && head + 1 - cached_tail_ >= blocks_ && !roomForNext(head)) {
    if (!waitForRoom(head)) return false;
    // The drain that made room may have taken this one too.
    taken_whole = open_taken_.load(std::memory_order_acquire) == takenMark(head, records);
  }
  sealed_[head & mask_] = {records, static_cast<uint32_t>(value_at_ - values_begin_)};
  // The new block's fill before the head: a consumer that sees the head
  // move sees the fill of the block it opened.
  open(head + 1);
  // Release: the sealed block's bytes and counts are visible before the
  // consumer can see the head past it.
  head_.store(head + 1, std::memory_order_release);
  // And freed as the consumer would free it at its next look (it may do so
  // first: then this finds the tail moved on).
  if (taken_whole) {
    uint64_t expected = head;
    (void)tail_.compare_exchange_strong(expected, head + 1, std::memory_order_acq_rel);
    cached_tail_ = head + 1;
  }
  return true;
}

EventRing::ConsumerMark EventRing::consumerMark() const {
  return {tail_.load(std::memory_order_relaxed),
          stall_.progress ? stall_.progress->load(std::memory_order_relaxed) : 0};
}

// Sleeps until released() has made room, or for kLongestSleep. The flag is
// raised before the last look at the tail, and released() looks at the
// flag after moving the tail, each behind a full fence: either this sees
// the room, or released() sees the flag and wakes it.
void EventRing::sleepUntilDrained(uint64_t head) {
  sleeping_.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!roomForNext(head)) {
    timespec timeout{0, std::chrono::nanoseconds(kLongestSleep).count()};
    futex(&sleeping_, FUTEX_WAIT_PRIVATE, 1, &timeout);
  }
  sleeping_.store(0, std::memory_order_relaxed);
}

// True once the next block is free; false (the event dropped) when lossy,
// or while the consumer side is stalled.
bool EventRing::waitForRoom(uint64_t head) {
  // Only this thread writes the counters, so load+store cannot lose an
  // increment, and it avoids a locked instruction.
  if (mode_ == Mode::kLossy) {
    drop();
    return false;
  }
  if (stalled_) {
    if (consumerMark() == stalled_at_) {
      drop();  // still no progress: no waiting at all
      return false;
    }
    stalled_ = false;  // the consumer side moved: wait again
  }
  if (stall_.on_full) stall_.on_full();
  // The real clock, not the policy's: a test's fake one counts its reads.
  const auto wait_began = std::chrono::steady_clock::now();
  ConsumerMark seen = consumerMark();
  std::optional<std::chrono::steady_clock::time_point> since;
  for (int spins = 0; !roomForNext(head); ++spins) {
    if (spins < kSpinsBeforeSleep) {
      cpuRelax();
      continue;
    }
    sleepUntilDrained(head);
    const ConsumerMark mark = consumerMark();
    const auto now = stall_.now();
    if (!since || mark != seen) {
      // Slow is not stuck: each bit of progress starts the limit afresh.
      seen = mark;
      since = now;
    } else if (now - *since >= stall_.limit) {
      stalled_ = true;
      stalled_at_ = mark;
      stalls_.store(stalls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      if (stall_.on_stall) stall_.on_stall();
      drop();
      addWaited(wait_began);
      return false;
    }
  }
  addWaited(wait_began);
  return true;
}

void EventRing::addWaited(std::chrono::steady_clock::time_point since) {
  const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since);
  waited_ns_.store(waited_ns_.load(std::memory_order_relaxed) + waited.count(), std::memory_order_relaxed);
}

bool EventRing::nextSpan(OpenBlock open, Span& span) {
  while (true) {
    // Acquire: the producer may have freed the block taken whole while open.
    const uint64_t tail = tail_.load(std::memory_order_acquire);
    if (tail != taken_block_) {
      taken_ = 0;
      taken_block_ = tail;
    }
    // Acquire: pairs with nextBlock()'s release, so the sealed blocks'
    // bytes and counts are there.
    if (tail >= cached_head_) cached_head_ = head_.load(std::memory_order_acquire);
    if (tail < cached_head_) {
      const Sealed sealed = sealed_[tail & mask_];
      span = {tail, sealed.records, sealed.value_bytes, true};
      if (taken_ < span.records) return true;
      released(tail + 1);  // taken whole while it was open
      continue;
    }
    // Acquire: pairs with push()'s release, so the bytes counted are there.
    const uint64_t fill = fill_.load(std::memory_order_acquire);
    if ((fill >> 32) != (tail & kFillBlockMask)) {
      cached_head_ = head_.load(std::memory_order_acquire);  // sealed meanwhile
      continue;
    }
    span = {tail, static_cast<size_t>((fill & kFillBlockMask) >> kFillRecordsShift),
            static_cast<size_t>(fill & kFillValueMask), false};
    if (taken_ >= span.records) return false;
    if (open == OpenBlock::kTakeWhenOld) {
      const auto now = std::chrono::steady_clock::now();
      if (open_seen_ != tail) {
        open_seen_ = tail;
        open_seen_at_ = now;
      }
      if (now - open_seen_at_ < kOpenPatience) return false;
    }
    return true;
  }
}

EventRing::Part EventRing::part(const Span& span, size_t n) {
  const auto* headers = reinterpret_cast<const std::byte*>(headersOf(span.block));
  const auto* values = reinterpret_cast<const std::byte*>(valuesOf(span.block));
  if (taken_ == 0 && n == span.records) return {{headers, span.records}, {values, span.value_bytes}, n};
  // A piece of a block: its records from the first not yet taken depend on
  // those before, so the block is decoded and the piece encoded afresh. Only
  // a block taken while open, or a consumer that asks for fewer events than
  // a block holds, comes here.
  if (decoded_block_ != span.block || decoded_.size() < std::min(taken_ + n, span.records)) {
    decoded_.clear();
    (void)wire::CompactEvents::decode(wire::CompactEvents::Split{{headers, span.records}, {values, span.value_bytes}},
                                      decoded_, kMaxBlockRecords);  // our own bytes: they decode
    decoded_block_ = span.block;
  }
  part_headers_.clear();
  part_values_.clear();
  {
    wire::CompactEventWriter writer(part_headers_, part_values_);
    const size_t end = std::min(taken_ + n, decoded_.size());
    for (size_t i = std::min(taken_, end); i < end; ++i) writer.add(decoded_[i]);
  }
  return {std::as_bytes(std::span(part_headers_)), std::as_bytes(std::span(part_values_)), n};
}

void EventRing::taken(const Span& span, size_t n) {
  taken_ += n;
  if (span.sealed) {
    if (taken_ == span.records) released(span.block + 1);
  } else {
    // Release: the reads of what was taken are done before the producer
    // may free the block.
    open_taken_.store(takenMark(span.block, taken_), std::memory_order_release);
  }
}

size_t EventRing::drain(std::span<TaskEventRecord> out) {
  size_t at = 0;
  return consume(out.size(), OpenBlock::kTake, [&](const Part& p) {
    std::vector<TaskEventRecord> records;
    (void)wire::CompactEvents::decode(wire::CompactEvents::Split{p.headers, p.values}, records, kMaxBlockRecords);
    std::copy(records.begin(), records.end(), out.begin() + static_cast<ptrdiff_t>(at));
    at += records.size();
  });
}

size_t EventRing::discard() {
  size_t gone = 0;
  Span span;
  while (nextSpan(OpenBlock::kTake, span)) {
    const size_t n = span.records - taken_;
    gone += n;
    taken(span, n);
  }
  return gone;
}

void EventRing::released(uint64_t tail) {
  taken_ = 0;
  taken_block_ = tail;
  // Release: our reads of the blocks are done before the producer may
  // reuse them.
  tail_.store(tail, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // see sleepUntilDrained
  if (sleeping_.load(std::memory_order_relaxed) != 0) futex(&sleeping_, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

}  // namespace nk::client
