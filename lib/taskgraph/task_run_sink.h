#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace nk {

// Where TaskRunTracker sends a session's task runs, as it finds them in the
// event stream: a trace writer (Perfetto, OTF2) that writes each one out
// and keeps nothing per finished task.
class TaskRunSink {
 public:
  struct Run {
    uint64_t task = 0, parent = 0;
    uint32_t function = 0;  // as named by nameFunction(); 0: unknown
    int32_t thread = -1;    // the runtime's worker; -1: unknown
    int64_t start_ns = 0;
  };
  // A dependence into the run's task, recorded before it started.
  struct Dependence {
    uint64_t from = 0, address = 0;
    uint8_t kind = 0;  // tasks.proto's DependenceKind
  };
  struct End {
    int64_t end_ns = 0;
    bool failed = false;
    // Still running when the stream ended: closed at its last timestamp.
    bool unfinished = false;
    // Closed early because the run enclosing it on its thread finished
    // first (lossy data: an untied task that moved threads).
    bool cut = false;
  };

  virtual ~TaskRunSink() = default;

  // The stream's first timestamp, before any other call.
  virtual void sessionStart(int64_t ns) = 0;
  // Each function index (from 1), once, before the first run that uses it.
  virtual void nameFunction(uint32_t function, std::string_view name) = 0;
  // Per thread, begins and ends nest and come in non-decreasing time.
  // `flows_in` are flow ids that an earlier end() passed as `flows_out`.
  virtual void begin(const Run& run, std::span<const Dependence> dependences, std::span<const uint64_t> flows_in) = 0;
  virtual void end(const Run& run, const End& end, std::span<const uint64_t> flows_out) = 0;
};

}  // namespace nk
