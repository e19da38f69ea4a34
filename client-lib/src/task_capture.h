#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "dependence_tracker.h"
#include "event_ring.h"

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
    ThreadEvents(uint32_t slot, size_t capacity, EventRing::Mode mode) : slot(slot), ring(capacity, mode) {}
    const uint32_t slot;
    EventRing ring;
    uint64_t next_serial = 0;
    // Dependences order siblings: one tracker per parent this thread runs.
    std::unordered_map<uint64_t, DependenceTracker> trackers;
    std::vector<DependenceEdge> edges;  // scratch, reused
  };

  TaskCapture(size_t ring_capacity, EventRing::Mode mode) : capacity_(ring_capacity), mode_(mode) {}

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
  // A parent that can have no more children: its tracker goes, no event.
  static void parentDone(ThreadEvents& t, uint64_t parent) {
    if (!t.trackers.empty()) t.trackers.erase(parent);
  }
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
  void sync(ThreadEvents& t, uint64_t task, uint64_t kind, bool end, uint64_t now_ns);

 private:
  static void push(ThreadEvents& t, TaskEventType type, uint64_t now_ns, uint64_t task, uint64_t a = 0,
                   uint64_t b = 0, uint64_t c = 0);

  const size_t capacity_;
  const EventRing::Mode mode_;
  mutable std::mutex mutex_;  // threads_ only; never on the event path
  std::vector<std::shared_ptr<ThreadEvents>> threads_;
};

}  // namespace nk::client
