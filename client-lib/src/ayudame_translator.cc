#include "ayudame_translator.h"

#include <cerrno>

namespace nk::client {

namespace {

constexpr uint64_t kSyncTaskwait = 1;
constexpr uint64_t kSyncBarrier = 2;

// The data pointer holds consecutive int64_t values.
int64_t at(const void* data, int index) { return static_cast<const int64_t*>(data)[index]; }

}  // namespace

int AyudameTranslator::event(TaskCapture::ThreadEvents& t, int event_id, int64_t task_id, const void* data,
                             uint64_t now_ns) {
  const uint64_t task = static_cast<uint64_t>(task_id);
  auto needsData = [&] { return data == nullptr; };
  switch (static_cast<AyudameEvent>(event_id)) {
    case AyudameEvent::kNull:
    case AyudameEvent::kInit:
    case AyudameEvent::kFinish:
    case AyudameEvent::kAddHiddenTask:
    case AyudameEvent::kAddPreselectTask:
    case AyudameEvent::kRunTask:      // kPreRunTask already marked the start
    case AyudameEvent::kRemoveTask:   // the graph keeps finished tasks
      return 0;
    case AyudameEvent::kPreInit:
      // Runtimes pass the address of an enum ayu_runtime_t: an int, not an int64_t.
      if (data) runtime_id_.store(static_cast<uint64_t>(*static_cast<const int*>(data)), std::memory_order_relaxed);
      return 0;
    case AyudameEvent::kRegisterFunction:
      if (needsData()) return -EINVAL;
      capture_.registerRuntimeFunction(task, static_cast<const char*>(data));
      return 0;
    case AyudameEvent::kAddTask:
      if (needsData()) return -EINVAL;
      capture_.createdWithId(t, task, 0, TaskCapture::runtimeFunctionId(static_cast<uint64_t>(at(data, 0))),
                             static_cast<int32_t>(at(data, 1)), now_ns);
      return 0;
    case AyudameEvent::kAddDependency:
      if (needsData()) return -EINVAL;
      capture_.edge(t, static_cast<uint64_t>(at(data, 0)), task, static_cast<uint64_t>(at(data, 1)),
                    DependenceKind::kInout, now_ns);
      return 0;
    case AyudameEvent::kAddTaskToQueue:
      capture_.queued(t, task, now_ns);
      return 0;
    case AyudameEvent::kPreRunTask:
      capture_.started(t, task, data ? static_cast<uint32_t>(at(data, 0)) : 0, now_ns);
      return 0;
    case AyudameEvent::kPostRunTask:
      capture_.finished(t, task, false, now_ns);
      return 0;
    case AyudameEvent::kRunTaskFailed:
      capture_.finished(t, task, true, now_ns);
      return 0;
    case AyudameEvent::kWaitOn:
    case AyudameEvent::kAddWaitOnTask:
      capture_.sync(t, task, kSyncTaskwait, false, now_ns);
      return 0;
    case AyudameEvent::kBarrier:
      capture_.sync(t, task, kSyncBarrier, false, now_ns);
      return 0;
  }
  return -EINVAL;
}

std::string AyudameTranslator::functionName(uint64_t function_id) const {
  std::string name;
  capture_.functionName(TaskCapture::runtimeFunctionId(function_id), &name);
  return name;
}

}  // namespace nk::client
