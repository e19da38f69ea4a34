#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "client_options.h"
#include "task_capture.h"
#include "task_shipper.h"

namespace nk::client {

// Task events for OpenMP programs (NODEKEEPER_TASKS): the OMPT task
// callbacks, in plain values, onto TaskCapture; a TaskShipper streams them.
// Exists only while task events are on, so that a program without them
// pays one null check in no callback at all (they are not registered).
class TaskTool {
 public:
  static TaskTool* instance();
  static void start(const ClientOptions& options);
  static void stop();

  void implicitTaskBegin(uint64_t* task);
  void implicitTaskEnd(uint64_t task);
  void taskCreated(uint64_t* parent, uint64_t* task, uint64_t code_address);
  void dependences(uint64_t task, std::span<const Dependence> deps);
  void taskSwitched(uint64_t prior, bool prior_done, bool prior_cancelled, uint64_t next);
  void sync(uint64_t task, uint64_t kind, bool end);

 private:
  struct Key {
    explicit Key() = default;
  };

 public:
  TaskTool(Key, const ClientOptions& options);  // through start()

 private:
  TaskCapture::ThreadEvents& thread();

  TaskCapture capture_;
  TaskShipper shipper_;
};

}  // namespace nk::client
