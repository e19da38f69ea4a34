// Where an empty task's time goes on the app thread in libnodekeeper's event
// path (TaskCapture over EventRing, as TaskTool drives it), piece by piece, side
// by side in one run, ns per task (median of 5 runs of 2 M tasks):
//   3 clock reads              EventClock::ticks() three times (TSC when the
//                              kernel's clocksource is tsc, else clock_gettime)
//   3 plain stores             three 48-byte records into an array the size of
//                              the default ring (64 Ki events)
//   3 ring pushes, record copied / fields in place
//                              EventRing alone, which encodes each event into
//                              its open block: from a record built on the stack,
//                              or from the fields (TaskCapture); the plain
//                              stores above are what the ring did before it
//                              encoded (its slots were 48-byte records)
//   capture, no consumer       created + started + finished into the default
//                              ring, emptied between timed stretches (no clock)
//   capture + clock            the same with the three clock reads
//   capture + clock, shipper   a 64 Ki-event ring (the default) drained by a
//                              thread in 16 Ki chunks, as the shipper: what the
//                              consumer on the other core costs the producer
//   chain, no consumer         + one depend(inout) on one of 8 addresses
//                              (DependenceTracker, one edge event)
// Needs two free cores for the shipper row to mean anything.
//
//   task_capture_bench [--tasks N]

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "event_clock.h"
#include "task_capture.h"

using Clock = std::chrono::steady_clock;
using nk::client::Dependence;
using nk::client::DependenceKind;
using nk::client::EventClock;
using nk::client::EventRing;
using nk::client::TaskCapture;
using nk::client::TaskEventRecord;

namespace {

constexpr int kRepetitions = 5;
constexpr size_t kDefaultRing = 65536;
constexpr size_t kDrainChunk = 16384;

long g_tasks = 2'000'000;
volatile uint64_t g_sink = 0;

double nsPerTask(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double, std::nano>(end - begin).count() / static_cast<double>(g_tasks);
}

double clockReads() {
  uint64_t sum = 0;
  const auto begin = Clock::now();
  for (long i = 0; i < g_tasks; ++i) sum += EventClock::ticks() + EventClock::ticks() + EventClock::ticks();
  const auto end = Clock::now();
  g_sink = sum;
  return nsPerTask(begin, end);
}

// Into an array the size of the default ring, round robin: the floor for
// "store three records".
double plainStores() {
  std::vector<TaskEventRecord> records(kDefaultRing);
  const size_t mask = kDefaultRing - 1;
  const auto begin = Clock::now();
  for (long i = 0; i < g_tasks; ++i) {
    const auto n = static_cast<uint64_t>(i);
    const size_t at = static_cast<size_t>(3 * i);
    records[at & mask] = TaskEventRecord{nk::client::TaskEventType::kCreated, {}, n, n, 1, 2, 0};
    records[(at + 1) & mask] = TaskEventRecord{nk::client::TaskEventType::kStarted, {}, n, n, 1, 0, 0};
    records[(at + 2) & mask] = TaskEventRecord{nk::client::TaskEventType::kFinished, {}, n, n, 0, 0, 0};
  }
  const auto end = Clock::now();
  g_sink = records[7].task_id;
  return nsPerTask(begin, end);
}

// One event into a ring, out of line as TaskCapture's calls are: as a
// record built on the stack and then copied (how TaskCapture pushed
// before), or field by field into its slot.
[[gnu::noinline]] void pushCopied(EventRing& ring, nk::client::TaskEventType type, uint64_t now, uint64_t task,
                                  uint64_t a, uint64_t b) {
  TaskEventRecord record{};
  record.type = type;
  record.timestamp_ns = now;
  record.task_id = task;
  record.a = a;
  record.b = b;
  ring.push(record);
}

[[gnu::noinline]] void pushInPlace(EventRing& ring, nk::client::TaskEventType type, uint64_t now, uint64_t task,
                                   uint64_t a, uint64_t b) {
  ring.push(type, now, task, a, b, 0);
}

// Three events a task into the default ring, emptied by this thread between
// timed stretches.
template <bool kInPlace>
double ringPushes() {
  EventRing ring(kDefaultRing, EventRing::Mode::kLossless);
  std::vector<TaskEventRecord> chunk(kDefaultRing);
  const long stretch = static_cast<long>(kDefaultRing / 4);
  auto push = kInPlace ? &pushInPlace : &pushCopied;
  Clock::duration timed{};
  for (long i = 0; i < g_tasks;) {
    const long end = std::min(g_tasks, i + stretch);
    const auto begin = Clock::now();
    for (; i < end; ++i) {
      const auto n = static_cast<uint64_t>(i);
      push(ring, nk::client::TaskEventType::kCreated, n, n, 1, 0x401000);
      push(ring, nk::client::TaskEventType::kStarted, n, n, 1, 0);
      push(ring, nk::client::TaskEventType::kFinished, n, n, 0, 0);
    }
    timed += Clock::now() - begin;
    ring.drain(chunk);
  }
  return std::chrono::duration<double, std::nano>(timed).count() / static_cast<double>(g_tasks);
}

// The events TaskTool makes for one empty (or chained) task.
template <bool kClock, bool kChain>
void oneTask(TaskCapture& capture, TaskCapture::ThreadEvents& t, uint64_t parent, long i, uint64_t* cells) {
  uint64_t now = kClock ? EventClock::ticks() : static_cast<uint64_t>(i);
  uint64_t task = capture.created(t, parent, 0x401000, 0, now);
  if constexpr (kChain) {
    Dependence dep{reinterpret_cast<uint64_t>(&cells[(i % 8) * 8]), DependenceKind::kInout};
    capture.dependences(t, parent, task, std::span<const Dependence>(&dep, 1), now);
  }
  if (kClock) now = EventClock::ticks();
  capture.started(t, task, t.slot, now);
  if (kClock) now = EventClock::ticks();
  capture.finished(t, task, false, now);
}

// The default ring (64 Ki events), emptied either by this thread between
// timed stretches (the event path alone, its ring warm in cache) or by a
// thread draining it as the shipper does.
template <bool kClock, bool kChain>
double capture(bool shipper) {
  TaskCapture capture(kDefaultRing, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  const uint64_t parent = TaskCapture::newId(*t, true);
  static uint64_t cells[64];
  std::atomic<bool> done{false};
  std::thread consumer;
  std::vector<TaskEventRecord> chunk(kDefaultRing);
  if (shipper) {
    consumer = std::thread([&] {
      std::vector<TaskEventRecord> records(kDrainChunk);
      for (;;) {
        const bool last = done.load(std::memory_order_acquire);
        size_t n = t->ring.drain(records);
        if (n > 0) capture.delivered(n);
        if (n == 0 && last) break;
        if (n < records.size()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  }
  // A stretch fills at most a quarter of the ring (4 events a task at most).
  const long stretch = shipper ? g_tasks : static_cast<long>(kDefaultRing / 16);
  Clock::duration timed{};
  for (long i = 0; i < g_tasks;) {
    const long end = std::min(g_tasks, i + stretch);
    const auto begin = Clock::now();
    for (; i < end; ++i) oneTask<kClock, kChain>(capture, *t, parent, i, cells);
    timed += Clock::now() - begin;
    if (!shipper) t->ring.drain(chunk);
  }
  done.store(true, std::memory_order_release);
  if (consumer.joinable()) consumer.join();
  if (capture.dropped() != 0) std::fprintf(stderr, "dropped %llu\n", static_cast<unsigned long long>(capture.dropped()));
  return std::chrono::duration<double, std::nano>(timed).count() / static_cast<double>(g_tasks);
}

template <typename Run>
double median(Run run) {
  std::array<double, kRepetitions> v;
  for (double& x : v) x = run();
  std::sort(v.begin(), v.end());
  return v[kRepetitions / 2];
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tasks" && i + 1 < argc) g_tasks = std::max(1000L, std::atol(argv[++i]));
    else {
      std::fprintf(stderr, "usage: task_capture_bench [--tasks N]\n");
      return 2;
    }
  }
  EventClock::init();
  std::printf("libnodekeeper's event path per task on the app thread: %ld tasks, median of %d runs\n", g_tasks,
              kRepetitions);
  std::printf("%-34s %10s\n", "", "ns/task");
  std::printf("%-34s %10.1f\n", "3 clock reads", median(clockReads));
  std::printf("%-34s %10.1f\n", "3 plain stores", median(plainStores));
  std::printf("%-34s %10.1f\n", "3 ring pushes, record copied", median(ringPushes<false>));
  std::printf("%-34s %10.1f\n", "3 ring pushes, fields in place", median(ringPushes<true>));
  std::printf("%-34s %10.1f\n", "capture, no consumer", median([] { return capture<false, false>(false); }));
  std::printf("%-34s %10.1f\n", "capture + clock", median([] { return capture<true, false>(false); }));
  std::printf("%-34s %10.1f\n", "capture + clock, shipper",
              median([] { return capture<true, false>(true); }));
  std::printf("%-34s %10.1f\n", "chain, no consumer", median([] { return capture<false, true>(false); }));
  return 0;
}
