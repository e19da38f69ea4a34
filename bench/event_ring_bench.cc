// Cost of the per-thread task-event ring on the application thread.
//
//   event_ring_bench
//
// Side by side in one run, 10 million TaskEventRecords each (the ring
// encodes them into its blocks; the baselines store the 48-byte records):
//   - EventRing lossless, ring of 4096, a concurrent consumer draining it
//   - EventRing lossy, same, drops counted
//   - EventRing filled and drained by one thread (its cost without any
//     cross-core traffic)
//   - baseline: the same records written into a preallocated std::vector of
//     10 million (no consumer; the floor for "just store the record")
//   - baseline: the same records written round-robin into a preallocated
//     std::vector of 4096 (cache-resident, no consumer)
// Reports ns per push on the producer thread, events/s the consumer drained
// and the drop rate; the median of 5 repetitions. Needs two free cores for
// the ring rows to mean anything.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "event_ring.h"

using Clock = std::chrono::steady_clock;
using nk::client::EventRing;
using nk::client::TaskEventRecord;
using nk::client::TaskEventType;

namespace {

constexpr uint64_t kEvents = 10'000'000;
constexpr size_t kRingCapacity = 4096;
constexpr size_t kDrainBatch = 256;
constexpr int kRepetitions = 5;

struct Result {
  double ns_per_push = 0;
  double drained_per_s = 0;  // 0: no consumer
  double drop_percent = 0;
};

// The same record for every row, cheap to make, not foldable by the compiler.
inline TaskEventRecord makeRecord(uint64_t i) {
  TaskEventRecord r{};
  r.type = TaskEventType::kStarted;
  r.timestamp_ns = i * 13;
  r.task_id = i;
  r.a = i & 63;
  return r;
}

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

Result runRing(EventRing::Mode mode) {
  auto ring = std::make_unique<EventRing>(kRingCapacity, mode);
  std::atomic<bool> start{false};
  std::atomic<bool> producer_done{false};
  uint64_t received = 0;
  uint64_t id_sum = 0;
  Clock::time_point consumer_begin;
  Clock::time_point consumer_end;

  std::thread consumer([&] {
    std::vector<TaskEventRecord> batch(kDrainBatch);
    while (!start.load(std::memory_order_acquire)) {
    }
    consumer_begin = Clock::now();
    for (;;) {
      // Read the flag before draining, so a drain that comes back empty
      // after the flag was seen really is the end.
      const bool done = producer_done.load(std::memory_order_acquire);
      const size_t n = ring->drain(batch);
      for (size_t i = 0; i < n; ++i) {
        id_sum += batch[i].task_id;
      }
      received += n;
      if (n == 0 && done) {
        break;
      }
    }
    consumer_end = Clock::now();
  });

  start.store(true, std::memory_order_release);
  const auto begin = Clock::now();
  for (uint64_t i = 0; i < kEvents; ++i) {
    ring->push(makeRecord(i));
  }
  const auto end = Clock::now();
  producer_done.store(true, std::memory_order_release);
  consumer.join();

  const bool lossless = mode == EventRing::Mode::kLossless;
  if (received + ring->dropped() != kEvents ||
      (lossless && id_sum != kEvents * (kEvents - 1) / 2)) {
    std::fprintf(stderr, "event accounting is wrong: received %llu dropped %llu\n",
                 static_cast<unsigned long long>(received),
                 static_cast<unsigned long long>(ring->dropped()));
  }
  return {secondsBetween(begin, end) * 1e9 / kEvents,
          received / secondsBetween(consumer_begin, consumer_end),
          100.0 * static_cast<double>(ring->dropped()) / kEvents};
}

// The ring's own cost without cross-core traffic: the same thread fills the
// ring, then drains it untimed.
Result runRingSameThread() {
  auto ring = std::make_unique<EventRing>(kRingCapacity, EventRing::Mode::kLossless);
  std::vector<TaskEventRecord> batch(kRingCapacity);
  Clock::duration pushing{};
  for (uint64_t i = 0; i < kEvents;) {
    const uint64_t batch_end = std::min<uint64_t>(i + kRingCapacity, kEvents);
    const auto begin = Clock::now();
    for (; i < batch_end; ++i) {
      ring->push(makeRecord(i));
    }
    pushing += Clock::now() - begin;
    ring->drain(batch);
  }
  return {std::chrono::duration<double, std::nano>(pushing).count() / kEvents, 0, 0};
}

Result runVector(size_t slots) {
  // Value-initialised, so every page is touched before the clock starts.
  std::vector<TaskEventRecord> records(slots);
  const uint64_t mask = slots - 1;  // used only when slots is a power of two below kEvents
  const bool wraps = slots < kEvents;
  const auto begin = Clock::now();
  for (uint64_t i = 0; i < kEvents; ++i) {
    records[wraps ? (i & mask) : i] = makeRecord(i);
  }
  const auto end = Clock::now();
  // Reading every record afterwards keeps the stores from being elided.
  uint64_t sum = 0;
  for (const auto& r : records) {
    sum += r.task_id;
  }
  if (sum == 1) {
    std::puts("");
  }
  return {secondsBetween(begin, end) * 1e9 / kEvents, 0, 0};
}

template <typename Run>
Result median(Run run) {
  std::array<Result, kRepetitions> results;
  for (auto& r : results) {
    r = run();
  }
  std::sort(results.begin(), results.end(),
            [](const Result& x, const Result& y) { return x.ns_per_push < y.ns_per_push; });
  return results[kRepetitions / 2];
}

void printRow(const char* name, const Result& r) {
  if (r.drained_per_s > 0) {
    std::printf("%-36s %10.2f %14.1f %9.2f%%\n", name, r.ns_per_push, r.drained_per_s / 1e6,
                r.drop_percent);
  } else {
    std::printf("%-36s %10.2f %14s %10s\n", name, r.ns_per_push, "-", "-");
  }
}

}  // namespace

int main() {
  static_assert((kRingCapacity & (kRingCapacity - 1)) == 0);
  std::printf("%llu events of %zu bytes, ring of %zu, drain batch %zu, median of %d runs\n\n",
              static_cast<unsigned long long>(kEvents), sizeof(TaskEventRecord), kRingCapacity,
              kDrainBatch, kRepetitions);
  std::printf("%-36s %10s %14s %10s\n", "", "ns/push", "drained Mev/s", "dropped");
  printRow("EventRing lossless + consumer", median([] { return runRing(EventRing::Mode::kLossless); }));
  printRow("EventRing lossy + consumer", median([] { return runRing(EventRing::Mode::kLossy); }));
  printRow("EventRing, same thread drains later", median(runRingSameThread));
  printRow("std::vector 10M preallocated", median([] { return runVector(kEvents); }));
  printRow("std::vector 4096 round-robin", median([] { return runVector(kRingCapacity); }));
  return 0;
}
