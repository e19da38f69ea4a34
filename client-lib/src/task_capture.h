#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dependence_tracker.h"
#include "event_clock.h"
#include "event_ring.h"
#include "published_clock_fit.h"

namespace nk::client {

// Turns the task callbacks of a runtime (OMPT's task_create, dependences,
// task_schedule, sync_region; the C API) into task events in per-thread
// rings, with the dependence edges rebuilt from addresses. The callbacks'
// glue passes plain values, so this is tested without an OpenMP runtime.
//
// The event path touches only the calling thread's ThreadEvents: its ring
// (whose other end is the shipper), its id counter and the dependence
// trackers of the tasks it runs. The one lock is taken once per thread, to
// hand its ring to the shipper.
class TaskCapture {
 public:
  struct ThreadEvents {
    ThreadEvents(uint32_t slot, size_t capacity, EventRing::Mode mode, EventRing::StallPolicy stall = {})
        : slot(slot), ring(capacity, mode, stall) {}
    const uint32_t slot;
    EventRing ring;
    uint64_t next_serial = 0;
    // Dependences order siblings: one tracker per parent this thread runs.
    std::unordered_map<uint64_t, DependenceTracker> trackers;
    // The parent whose tracker was used last (siblings come in runs);
    // entries of an unordered_map stay put when it grows.
    uint64_t tracked_parent = 0;
    DependenceTracker* tracker = nullptr;
    std::vector<DependenceEdge> edges;  // scratch, reused
    // Events not captured while the daemon was away (see setCapturing);
    // written by this thread only, read by the shipper.
    std::atomic<uint64_t> uncaptured{0};
    // This thread's last event's time: a refit of the clock must not send
    // its events back in time (a task's start and end are on one thread).
    uint64_t last_ns = 0;
    // Its copy of the clock's fit (TaskCapture::clockFit), and which one.
    EventClock::Fit fit;
    uint64_t fit_version = ~uint64_t{0};
    // The functions this thread told the shipper of lately, direct-mapped:
    // a construct in a loop the compiler unrolled has a code address per
    // copy (UTS: four, in turn).
    std::array<uint64_t, 64> told_functions = [] {  // 2^6 entries: see tellFunction
      std::array<uint64_t, 64> none;
      none.fill(kNoFunction);
      return none;
    }();
  };
  static constexpr uint64_t kNoFunction = ~uint64_t{0};  // no function key has bit 63

  // Every ring's stall policy watches this capture's delivery progress
  // (whatever `stall.progress` said).
  TaskCapture(size_t ring_capacity, EventRing::Mode mode, EventRing::StallPolicy stall = {});
  // Each thread's ring sized by how many threads came before it.
  using RingSizing = std::function<size_t(size_t threads_before)>;
  TaskCapture(RingSizing ring_capacity, EventRing::Mode mode, EventRing::StallPolicy stall = {});

  EventRing::Mode mode() const { return mode_; }
  std::chrono::milliseconds stallLimit() const { return stall_.limit; }

  // The shipper, each time the daemon took a write (`events` of them task
  // events; a write of gate reports alone is progress too). A lossless
  // producer waits while this moves, however slowly.
  void delivered(uint64_t events) {
    delivered_events_.fetch_add(events, std::memory_order_relaxed);
    deliveries_.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t deliveries() const { return deliveries_.load(std::memory_order_relaxed); }
  uint64_t deliveredEvents() const { return delivered_events_.load(std::memory_order_relaxed); }
  // Off while there is no daemon to send to (none at the socket, or the
  // stream broke and is not back): the event path then records nothing, so
  // that the app pays no more than a check (no clock, no ring, no waiting),
  // and counts what it skipped. The shipper turns it on when a stream opens.
  bool capturing() const { return capturing_.load(std::memory_order_relaxed); }
  void setCapturing(bool on) { capturing_.store(on, std::memory_order_relaxed); }
  static void uncaptured(ThreadEvents& t, uint64_t events) {
    t.uncaptured.store(t.uncaptured.load(std::memory_order_relaxed) + events, std::memory_order_relaxed);
  }
  // Ticks to nanoseconds as the events are recorded: the shipper refits the
  // line as it goes (EventClock::Converter) and publishes it here. Until
  // then, a fit over the first two milliseconds (the constructor waits for
  // them when the clock is the counter).
  const PublishedClockFit& clockFit() const { return clock_fit_; }
  PublishedClockFit& clockFit() { return clock_fit_; }
  // The function keys (kCreated's `b`) threads have recorded since the last
  // call, some more than once: the shipper names each to the daemon before
  // the events that use it. Taken after the events they name.
  std::vector<uint64_t> takeToldFunctions();

  // Over every thread so far: events not captured (capturing() off).
  uint64_t uncaptured() const;
  // Over every ring so far: events dropped, and spells of no progress.
  uint64_t dropped() const;
  uint64_t stalls() const;
  // Over every ring so far: how long their producers waited for room.
  std::chrono::nanoseconds waited() const;

  // Once per thread (thread_begin): its events and a slot in task ids.
  std::shared_ptr<ThreadEvents> attachThread();
  // The shipper's view: every ring so far.
  std::vector<std::shared_ptr<ThreadEvents>> threads() const;

  // Ids are unique without a shared counter: the thread's slot in the high
  // bits, its own serial number in the low 40.
  static constexpr int kSerialBits = 40;
  // Implicit tasks (a parallel region's, the initial one) are parents but
  // not graph nodes; their ids carry this bit so events about them are
  // told apart and skipped.
  static constexpr uint64_t kImplicitBit = uint64_t{1} << 63;
  static uint64_t newId(ThreadEvents& t, bool implicit) {
    return (static_cast<uint64_t>(t.slot) << kSerialBits) | ++t.next_serial | (implicit ? kImplicitBit : 0);
  }
  // Names of task functions that runtimes register (the C API, Ayudame),
  // carried in kCreated's `b` where OMPT puts a code address. User-space
  // code addresses stay below bit 47, so this bit tells the two apart.
  static constexpr uint64_t kFunctionBit = uint64_t{1} << 62;
  // Among registered ids: one a runtime numbered itself (Ayudame's), kept in
  // the low bits. Mapping it by arithmetic, not by a table, lets ADDTASK
  // name its function without a lookup, so without a lock.
  static constexpr uint64_t kRuntimeFunctionBit = uint64_t{1} << 61;
  static bool isFunctionId(uint64_t id) { return (id & kFunctionBit) != 0; }
  static uint64_t runtimeFunctionId(uint64_t runtime_id) {
    return kFunctionBit | kRuntimeFunctionBit | (runtime_id & (kRuntimeFunctionBit - 1));
  }
  // An id for `name`; the same name gets the same id again.
  uint64_t registerFunction(std::string_view name);
  // Names (or renames) the runtime's own function id; returns the registry id.
  uint64_t registerRuntimeFunction(uint64_t runtime_id, std::string_view name);
  // For the shipper; false for an id nobody registered.
  bool functionName(uint64_t id, std::string* name) const;

  // A parent that can have no more children: its tracker goes, no event.
  static void parentDone(ThreadEvents& t, uint64_t parent) { dropTracker(t, parent); }
  uint64_t created(ThreadEvents& t, uint64_t parent, uint64_t function, int32_t priority, uint64_t now_ns);
  // A runtime that names its own task ids (the C API, Ayudame).
  void createdWithId(ThreadEvents& t, uint64_t task, uint64_t parent, uint64_t function, int32_t priority,
                     uint64_t now_ns);
  void dependences(ThreadEvents& t, uint64_t parent, uint64_t task, std::span<const Dependence> deps, uint64_t now_ns);
  // An edge the runtime worked out itself.
  void edge(ThreadEvents& t, uint64_t from, uint64_t to, uint64_t address, DependenceKind kind, uint64_t now_ns);
  void queued(ThreadEvents& t, uint64_t task, uint64_t now_ns);
  void started(ThreadEvents& t, uint64_t task, uint32_t thread_num, uint64_t now_ns);
  // A task that ends can have no more children: its tracker goes.
  void finished(ThreadEvents& t, uint64_t task, bool failed, uint64_t now_ns);
  // `task` ends and `next` resumes (or starts) on this thread at once: one
  // record for both (TaskEventRecord's kFinished).
  void finishedThenStarted(ThreadEvents& t, uint64_t task, bool failed, uint64_t next, uint32_t thread_num,
                           uint64_t now_ns);
  void sync(ThreadEvents& t, uint64_t task, uint64_t kind, bool end, uint64_t now_ns);

 private:
  static void dropTracker(ThreadEvents& t, uint64_t parent) {
    if (t.trackers.empty()) return;
    // Most tasks are no parent of dependent tasks: when the one tracker
    // is someone else's, there is nothing to look up.
    if (t.trackers.size() == 1 && t.tracker && t.tracked_parent != parent) return;
    if (parent == t.tracked_parent) {
      t.tracked_parent = 0;
      t.tracker = nullptr;
    }
    t.trackers.erase(parent);
  }
  // `now`: EventClock ticks.
  [[gnu::always_inline]] void push(ThreadEvents& t, TaskEventType type, uint64_t now, uint64_t task, uint64_t a = 0,
                                   uint64_t b = 0, uint64_t c = 0) {
    if (capturing()) [[likely]] {
      if (clock_fit_.version() != t.fit_version) [[unlikely]]
        t.fit = clock_fit_.read(&t.fit_version);
      const uint64_t ns = std::max(EventClock::toNs(t.fit, now), t.last_ns);
      t.last_ns = ns;
      t.ring.push(type, ns, task, a, b, c);  // lossy mode counts what does not fit
    } else {
      uncaptured(t, 1);
    }
  }
  // Before the creation that names `function` is pushed: the shipper takes
  // the told keys after the events.
  void tellFunction(ThreadEvents& t, uint64_t function) {
    // Fibonacci hashing: code addresses a page apart (UTS's constructs, and
    // 0x1000 and 0x2000 in the test) took one entry by their low bits.
    uint64_t& told = t.told_functions[(function * 0x9e3779b97f4a7c15ull) >> 58];
    if (told == function) [[likely]]
      return;
    told = function;
    std::lock_guard lock(told_mutex_);
    told_functions_.push_back(function);
  }

  const RingSizing capacity_;
  const EventRing::Mode mode_;
  // Written only by the shipper, read by stalled producers: each on its
  // own line, away from the lock and the rings' list.
  alignas(64) std::atomic<uint64_t> deliveries_{0};
  std::atomic<uint64_t> delivered_events_{0};
  const EventRing::StallPolicy stall_;  // after deliveries_: points at it
  // Read by every event, written when the daemon comes or goes: a line of
  // its own, which stays in every core's cache.
  alignas(64) std::atomic<bool> capturing_{true};
  alignas(64) mutable std::mutex mutex_;  // threads_ only; never on the event path
  std::vector<std::shared_ptr<ThreadEvents>> threads_;
  // Registration is rare and the shipper looks names up once per task, so
  // one lock; the app's event path never takes it.
  mutable std::mutex functions_mutex_;
  PublishedClockFit clock_fit_;
  // Keys told by the threads, for the shipper; a thread takes the lock only
  // when a key misses its own small table.
  std::mutex told_mutex_;
  std::vector<uint64_t> told_functions_;
  std::unordered_map<uint64_t, std::string> function_names_;
  std::unordered_map<std::string, uint64_t> function_ids_;
  uint64_t next_function_ = 0;
};

}  // namespace nk::client
