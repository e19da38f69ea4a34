#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "ayudame_translator.h"
#include "client_options.h"
#include "task_capture.h"
#include "task_gate.h"
#include "task_shipper.h"

namespace nk::client {

// Task events (NODEKEEPER_TASKS): the OMPT task callbacks, the task C API
// and AYU_event, in plain values, onto TaskCapture; a TaskShipper streams
// them. Exists only while task events are on, so that a program without
// them pays one null check in no callback at all (they are not registered).
class TaskTool {
 public:
  static TaskTool* instance();
  static void start(const ClientOptions& options);
  static void stop();

  // The OMPT callbacks hand in their tasks' data (ompt_data_t's value):
  // the task's id, and kCreatedChildrenBit while it has created tasks it
  // has not yet waited for. idOf() takes the bit off.
  static constexpr uint64_t kCreatedChildrenBit = uint64_t{1} << 60;
  static uint64_t idOf(uint64_t task_data) { return task_data & ~kCreatedChildrenBit; }
  void implicitTaskBegin(uint64_t* task);
  void implicitTaskEnd(uint64_t task);
  void taskCreated(uint64_t* parent, uint64_t* task, uint64_t code_address);
  void dependences(uint64_t task, std::span<const Dependence> deps);
  void taskSwitched(uint64_t prior, bool prior_done, bool prior_cancelled, uint64_t next);
  // A taskwait (kind 1) of a task that created none since its last one
  // waits for nothing: its two events are not recorded (about 70% of a
  // recursive tree's tasks are leaves, and a third of their events were
  // those). The debugger's gate still sees it.
  void sync(uint64_t* task, uint64_t kind, bool end);

  // Runtimes that name their own tasks and edges (the C API, Ayudame).
  uint64_t registerFunction(std::string_view name) { return capture_.registerFunction(name); }
  void runtimeTaskCreated(uint64_t task, uint64_t parent, uint64_t function, int32_t priority);
  void runtimeEdge(uint64_t from, uint64_t to, uint64_t address, DependenceKind kind);
  void runtimeTaskQueued(uint64_t task);
  void runtimeTaskStarted(uint64_t task, uint32_t worker);
  void runtimeTaskEnded(uint64_t task, bool failed);
  // The scheduler's questions (nk_task_select, nk_task_may_start).
  std::optional<size_t> selectTask(std::span<const uint64_t> ready) { return gate_.select(ready); }
  bool mayStart(uint64_t task) { return gate_.mayStart(task); }
  // AyudameTranslator::event's result.
  int ayudameEvent(int event, int64_t task, const void* data);

 private:
  struct Key {
    explicit Key() = default;
  };

 public:
  TaskTool(Key, const ClientOptions& options);  // through start()

 private:
  TaskCapture::ThreadEvents& thread();
  TaskCapture::ThreadEvents& attachThisThread();

  TaskCapture capture_;
  AyudameTranslator ayudame_{capture_};
  TaskGate gate_;
  TaskShipper shipper_;
};

}  // namespace nk::client
