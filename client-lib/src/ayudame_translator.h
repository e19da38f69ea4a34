#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "task_capture.h"

namespace nk::client {

// Ayudame 1's event ids, as Temanejo's runtimes (StarPU, PaRSEC, Nanos++)
// send them through AYU_event(event, task_id, data).
enum class AyudameEvent : int {
  kNull = 0,
  kPreInit = 1,           // data: enum ayu_runtime_t* (an int)
  kInit = 2,
  kFinish = 3,
  kRegisterFunction = 4,  // task_id: function id; data: const char* name
  kAddTask = 5,           // data: {function id, priority}
  kAddHiddenTask = 6,
  kAddDependency = 7,     // data: {from task, memory address, original address}
  kAddTaskToQueue = 8,    // data: {queue or worker}
  kAddPreselectTask = 9,
  kPreRunTask = 10,       // data: {worker}; on the worker, right before the task runs
  kRunTask = 11,
  kPostRunTask = 12,
  kRunTaskFailed = 13,
  kRemoveTask = 14,
  kWaitOn = 15,
  kBarrier = 16,
  kAddWaitOnTask = 17,
};

// Turns AYU_event calls into task events. The runtime names its own task
// ids, and its edges: no address tracking here. Function names go to the
// capture's registry under TaskCapture::runtimeFunctionId(the runtime's
// id), which ADDTASK's events carry, so that the shipper can name them.
// Kinds of sync in kSync records: 1 taskwait (WAITON, ADDWAITONTASK),
// 2 barrier.
class AyudameTranslator {
 public:
  explicit AyudameTranslator(TaskCapture& capture) : capture_(capture) {}

  // 0, or -EINVAL for an unknown event id or a null `data` where the event
  // needs one (the entry point returns void, so the caller only logs it).
  int event(TaskCapture::ThreadEvents& thread, int event_id, int64_t task_id, const void* data, uint64_t now_ns);

  // By the runtime's own function id; "" when it registered none.
  std::string functionName(uint64_t function_id) const;
  uint64_t runtimeId() const { return runtime_id_.load(std::memory_order_relaxed); }

 private:
  TaskCapture& capture_;
  std::atomic<uint64_t> runtime_id_{0};
};

}  // namespace nk::client
