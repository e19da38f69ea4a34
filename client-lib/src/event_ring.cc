#include "event_ring.h"

#include <algorithm>
#include <bit>
#include <optional>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

namespace nk::client {

namespace {

// Beyond this a per-thread ring is a configuration mistake (16 Mi events is
// 768 MiB per thread); clamping also keeps std::bit_ceil defined.
constexpr size_t kMaxCapacity = size_t{1} << 24;

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

size_t roundedCapacity(size_t requested) {
  return std::bit_ceil(std::clamp<size_t>(requested, 2, kMaxCapacity));
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
    : capacity_(roundedCapacity(capacity)),
      mask_(capacity_ - 1),
      mode_(mode),
      stall_(stall),
      slots_(std::make_unique_for_overwrite<TaskEventRecord[]>(capacity_)) {
  // Touched now, page by page (volatile, so not folded into a calloc that
  // leaves the pages unmapped): otherwise the producer takes a page fault
  // every 85 events the first time round, on the app's time.
  auto* bytes = reinterpret_cast<volatile unsigned char*>(slots_.get());
  const size_t size = capacity_ * sizeof(TaskEventRecord);
  for (size_t at = 0; at < size; at += 4096) bytes[at] = 0;
}

bool EventRing::refreshTailHasRoom(uint64_t head) {
  // Acquire: the consumer's copies out of the slots it released are done
  // before we overwrite them.
  cached_tail_ = tail_.load(std::memory_order_acquire);
  return head - cached_tail_ < capacity_;
}

EventRing::ConsumerMark EventRing::consumerMark() const {
  return {tail_.load(std::memory_order_relaxed),
          stall_.progress ? stall_.progress->load(std::memory_order_relaxed) : 0};
}

// Sleeps until drain() has made room, or for kLongestSleep. The flag is
// raised before the last look at the tail, and drain() looks at the flag
// after moving the tail, each behind a full fence: either this sees the
// room, or drain() sees the flag and wakes it.
void EventRing::sleepUntilDrained(uint64_t head) {
  sleeping_.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!refreshTailHasRoom(head)) {
    timespec timeout{0, std::chrono::nanoseconds(kLongestSleep).count()};
    futex(&sleeping_, FUTEX_WAIT_PRIVATE, 1, &timeout);
  }
  sleeping_.store(0, std::memory_order_relaxed);
}

// Kept out of line so push()'s inlined fast path stays a handful of
// instructions.
bool EventRing::pushWhenFull(const TaskEventRecord& event) {
  const uint64_t head = head_.load(std::memory_order_relaxed);
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
  for (int spins = 0; !refreshTailHasRoom(head); ++spins) {
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
  publish(head, event);
  addWaited(wait_began);
  return true;
}

void EventRing::addWaited(std::chrono::steady_clock::time_point since) {
  const auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since);
  waited_ns_.store(waited_ns_.load(std::memory_order_relaxed) + waited.count(), std::memory_order_relaxed);
}

size_t EventRing::drain(std::span<TaskEventRecord> out) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  uint64_t available = cached_head_ - tail;
  // Only touch the producer's cache line when what we already know about
  // cannot fill `out`.
  if (available < out.size()) {
    // Acquire: pairs with publish(), so the slots below are fully written.
    cached_head_ = head_.load(std::memory_order_acquire);
    available = cached_head_ - tail;
  }
  const size_t count = static_cast<size_t>(std::min<uint64_t>(available, out.size()));
  if (count == 0) {
    return 0;
  }
  const size_t first = static_cast<size_t>(tail & mask_);
  const size_t before_wrap = std::min(count, capacity_ - first);
  std::copy_n(&slots_[first], before_wrap, out.begin());
  std::copy_n(&slots_[0], count - before_wrap, out.begin() + before_wrap);
  released(tail + count);
  return count;
}

void EventRing::released(uint64_t tail) {
  // Release: our reads of the slots are done before the producer may reuse
  // them.
  tail_.store(tail, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // see sleepUntilDrained
  if (sleeping_.load(std::memory_order_relaxed) != 0) futex(&sleeping_, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

size_t EventRing::sizeApprox() const {
  // Tail first: head only grows, so a head read afterwards is never behind
  // the tail we saw, whichever thread calls this.
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  const uint64_t head = head_.load(std::memory_order_acquire);
  return static_cast<size_t>(std::min<uint64_t>(head - tail, capacity_));
}

}  // namespace nk::client
