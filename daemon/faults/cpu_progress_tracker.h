#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace nk {

// Each rank's CPU time from one look to the next, to tell a rank whose
// report is late because it is starved of CPU (its CPU time still grows)
// from one that is stuck (it does not). The daemon looks every heartbeat
// period and whenever a status probe asks; looks may come from several
// threads.
class CpuProgressTracker {
 public:
  // A look at the rank's CPU time at `now_ns`: how long ago a look found it
  // grown, this one included (0 when it grew since the last look); nullopt
  // when no look has found it grown yet or its CPU time is unknown. A new
  // pid for the rank starts over.
  std::optional<std::chrono::milliseconds> look(const std::string& job_id, uint32_t rank, pid_t pid,
                                                std::optional<std::chrono::microseconds> cpu_time, int64_t now_ns);
  // The job's tree is gone here: its ranks are not looked at any more.
  void forget(const std::string& job_id);
  size_t size() const;

 private:
  struct Seen {
    pid_t pid = -1;
    std::chrono::microseconds cpu_time{0};
    int64_t grew_ns = 0;  // 0: not seen to grow
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, uint32_t>, Seen> seen_;
};

}  // namespace nk
