#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "dependence_tracker.h"
#include "task_capture.h"

namespace nk::client {

// The task C API's argument checks (nodekeeper/tasks.h), apart from the
// calls so that they are tested without the library's gRPC half. They do
// not depend on the mode: a runtime sees the same errors whether task
// events are on or off.
struct TaskApiChecks {
  static int registerFunction(const char* name, const uint64_t* function_id) {
    return name && *name && function_id ? 0 : -EINVAL;
  }
  // Registered ids carry the registry's bit, and not the bit of Ayudame's
  // own numbering; checked without a lookup, so without a lock.
  static int create(uint64_t task, uint64_t parent, uint64_t function) {
    if (task == 0 || parent == task) return -EINVAL;
    if (function != 0 && (!TaskCapture::isFunctionId(function) || (function & TaskCapture::kRuntimeFunctionBit)))
      return -EINVAL;
    return 0;
  }
  static int depend(uint64_t from, uint64_t to, int kind, DependenceKind* out) {
    if (from == 0 || to == 0 || from == to) return -EINVAL;
    switch (kind) {
      case 1: *out = DependenceKind::kIn; return 0;
      case 2: *out = DependenceKind::kOut; return 0;
      case 3: *out = DependenceKind::kInout; return 0;
      case 4: *out = DependenceKind::kMutexinoutset; return 0;
      case 5: *out = DependenceKind::kInoutset; return 0;
      default: return -EINVAL;
    }
  }
  static int task(uint64_t task) { return task != 0 ? 0 : -EINVAL; }
  static int select(const uint64_t* ready, size_t count, const size_t* chosen) {
    return ready && count > 0 && chosen ? 0 : -EINVAL;
  }
};

}  // namespace nk::client
