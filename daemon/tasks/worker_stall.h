#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nk {

// Why every worker of a program waits at its task gate, and what would let
// them go: the line `status` shows when a debugger's block or break has
// stopped the whole program. OpenMP cannot run another task instead of one
// the debugger holds: the worker that picked it waits in the gate, so
// blocking a function with many tasks ends with every worker parked.
class WorkerStall {
 public:
  struct BlockedFunction {
    std::string function;
    uint64_t tasks = 0;  // its blocked tasks that have not started
  };
  struct Input {
    bool held = false;  // a break
    uint32_t steps_left = 0;
    uint32_t parked_workers = 0;
    // Workers seen running a task (the team as far as the daemon knows; 0:
    // no task has started yet).
    uint32_t workers = 0;
    std::vector<BlockedFunction> blocked_functions;
    // Tasks blocked by id (not by a blocked function) that have not started.
    std::vector<uint64_t> blocked_tasks;
    // A task started after the gate's last report: some worker has left
    // the gate since (it does so without a report), so parked_workers
    // counts too many.
    bool started_since_report = false;
  };

  // The line, or "" when some worker is still free (or none is parked).
  static std::string explain(const Input& input);
};

}  // namespace nk
