#pragma once

#include <cstdint>
#include <type_traits>

namespace nk::wire {

enum class TaskEventType : uint8_t {
  kCreated,
  kDependence,
  kQueued,
  kStarted,
  kFinished,
  kFailed,
  kSync,
  kRegionBegin,
  kRegionEnd,
};
// Types are 0 to kTaskEventTypeCount - 1; readers refuse any other.
inline constexpr uint8_t kTaskEventTypeCount = static_cast<uint8_t>(TaskEventType::kRegionEnd) + 1;

// One task event as captured on an application thread. Fixed-size and
// trivially copyable so the hot path is a plain copy into a ring slot, and
// the shipper sends the records as bytes: this layout is tasks.proto's
// PackedEvents, which the client library writes and the daemon and CLI read
// through this one definition. The
// payload fields are generic so that every event type fits in one record;
// what they mean depends on `type` (unused fields are 0):
//   kCreated:     a = parent task id, b = task function code pointer (or id),
//                 c = priority
//   kDependence:  a = predecessor task id (task_id is the successor),
//                 b = dependence address, c = dependence kind (in/out/inout...)
//   kStarted:     a = OpenMP thread number that runs the task
//   kFinished, kFailed: a = the task that resumes on this thread at the same
//                 moment (0: none), c = the OpenMP thread number it resumes
//                 on. One record for OMPT's one switch: in a recursive tree
//                 nearly every task's end resumes its parent, and that start
//                 was a fifth of the events. Readers expand it into the
//                 finish and a kStarted (TaskEventTranslator).
//   kSync:        a = sync kind (taskwait, taskgroup, barrier...)
//   kQueued, kRegionBegin, kRegionEnd: no payload
struct TaskEventRecord {
  TaskEventType type;
  // Explicit so the layout is obvious and the padding bytes are never
  // indeterminate when records are compared or shipped as bytes.
  uint8_t reserved[7];
  uint64_t timestamp_ns;
  uint64_t task_id;
  uint64_t a;
  uint64_t b;
  uint64_t c;
};

static_assert(std::is_trivially_copyable_v<TaskEventRecord>);
static_assert(std::is_standard_layout_v<TaskEventRecord>);
// 48 bytes: small enough that a 4096-slot ring stays within L2, and a
// change that grows the record is a deliberate decision, not an accident.
static_assert(sizeof(TaskEventRecord) == 48);

}  // namespace nk::wire
