// The task C API (nodekeeper/tasks.h) and Ayudame 1's AYU_event: argument
// checks, then TaskTool. Each entry point catches everything; the event
// path takes no lock (TaskTool's per-thread buffers).

#include "nodekeeper/tasks.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <functional>
#include <new>
#include <string>
#include <string_view>

#include "c_api_guard.h"
#include "client.h"
#include "task_api_checks.h"
#include "task_tool.h"

using nk::client::Client;
using nk::client::guarded;
using nk::client::DependenceKind;
using nk::client::TaskApiChecks;
using nk::client::TaskCapture;
using nk::client::TaskTool;

static_assert(NK_DEPEND_IN == static_cast<int>(DependenceKind::kIn));
static_assert(NK_DEPEND_OUT == static_cast<int>(DependenceKind::kOut));
static_assert(NK_DEPEND_INOUT == static_cast<int>(DependenceKind::kInout));
static_assert(NK_DEPEND_MUTEXINOUTSET == static_cast<int>(DependenceKind::kMutexinoutset));
static_assert(NK_DEPEND_INOUTSET == static_cast<int>(DependenceKind::kInoutset));

namespace {

// The active tool, started by the first call in the process; null while
// task events are off or after nk_finalize. After the first call this is
// an atomic load, and call_once's own check, on later misses.
TaskTool* tool() {
  if (TaskTool* active = TaskTool::instance()) [[likely]]
    return active;
  static std::once_flag once;
  std::call_once(once, [] { Client::instance().startTasksForRuntime(); });
  return TaskTool::instance();
}

// With task events off there is no registry, but the runtime still needs
// an id that nk_task_create takes, the same for the same name: one from the
// name's hash (nothing is recorded that a collision could mislabel).
uint64_t unrecordedFunctionId(std::string_view name) {
  uint64_t h = std::hash<std::string_view>{}(name) & (TaskCapture::kRuntimeFunctionBit - 1);
  return TaskCapture::kFunctionBit | (h == 0 ? 1 : h);
}

std::atomic<bool> g_said_bad_ayudame{false};

void say(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace

extern "C" {

NK_EXPORT int nk_task_register_function(const char* name, uint64_t* function_id) {
  return guarded([&] {
    if (int rc = TaskApiChecks::registerFunction(name, function_id)) return rc;
    if (TaskTool* t = tool())
      *function_id = t->registerFunction(name);
    else
      *function_id = unrecordedFunctionId(name);
    return 0;
  });
}

NK_EXPORT int nk_task_create(uint64_t task_id, uint64_t parent_id, uint64_t function_id, int32_t priority) {
  return guarded([&] {
    if (int rc = TaskApiChecks::create(task_id, parent_id, function_id)) return rc;
    if (TaskTool* t = tool()) t->runtimeTaskCreated(task_id, parent_id, function_id, priority);
    return 0;
  });
}

NK_EXPORT int nk_task_depend(uint64_t from_task, uint64_t to_task, const void* address, int kind) {
  return guarded([&] {
    DependenceKind k{};
    if (int rc = TaskApiChecks::depend(from_task, to_task, kind, &k)) return rc;
    if (TaskTool* t = tool()) t->runtimeEdge(from_task, to_task, reinterpret_cast<uint64_t>(address), k);
    return 0;
  });
}

NK_EXPORT int nk_task_queued(uint64_t task_id) {
  return guarded([&] {
    if (int rc = TaskApiChecks::task(task_id)) return rc;
    if (TaskTool* t = tool()) t->runtimeTaskQueued(task_id);
    return 0;
  });
}

NK_EXPORT int nk_task_start(uint64_t task_id, uint32_t worker) {
  return guarded([&] {
    if (int rc = TaskApiChecks::task(task_id)) return rc;
    if (TaskTool* t = tool()) t->runtimeTaskStarted(task_id, worker);
    return 0;
  });
}

NK_EXPORT int nk_task_end(uint64_t task_id, int failed) {
  return guarded([&] {
    if (int rc = TaskApiChecks::task(task_id)) return rc;
    if (TaskTool* t = tool()) t->runtimeTaskEnded(task_id, failed != 0);
    return 0;
  });
}

// Without a debugger (or with task events off) the scheduler's own order
// stands: index 0, after one flag check.
NK_EXPORT int nk_task_select(const uint64_t* ready, size_t count, size_t* chosen) {
  return guarded([&] {
    if (int rc = TaskApiChecks::select(ready, count, chosen)) return rc;
    TaskTool* t = tool();  // a scheduler that asks has asked for task events too
    if (!t) {
      *chosen = 0;
      return 0;
    }
    std::optional<size_t> pick = t->selectTask(std::span<const uint64_t>(ready, count));
    if (!pick) return -EAGAIN;
    *chosen = *pick;
    return 0;
  });
}

NK_EXPORT int nk_task_may_start(uint64_t task_id) {
  return guarded([&] {
    if (int rc = TaskApiChecks::task(task_id)) return rc;
    TaskTool* t = tool();
    return !t || t->mayStart(task_id) ? 0 : -EAGAIN;
  });
}

// Ayudame 1's signature is AYU_event(enum ayu_event_t, int64_t, void*): an
// enum is passed as an int. It returns nothing, so a bad event can only be
// said, once, and dropped.
NK_EXPORT void AYU_event(int event, int64_t task_id, void* data) {
  int rc = guarded([&] {
    TaskTool* t = tool();
    return t ? t->ayudameEvent(event, task_id, data) : 0;
  });
  if (rc >= 0 || g_said_bad_ayudame.exchange(true, std::memory_order_relaxed)) return;
  try {
    say("nodekeeper: ignoring AYU_event(" + std::to_string(event) + ", " + std::to_string(task_id) +
        "): unknown event or missing data (later bad events are ignored silently)");
  } catch (...) {
  }
}

}  // extern "C"
