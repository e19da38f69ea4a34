#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>

namespace nk {

// User-space CPU cycles of single threads through perf_event_open, one
// counter per thread, opened on first read and held until forget(). Many
// kernels (perf_event_paranoid, containers, VMs) refuse; available() says
// so once, and the caller falls back to schedstat.
class PerfCycleCounter {
 public:
  PerfCycleCounter() = default;
  ~PerfCycleCounter();
  PerfCycleCounter(const PerfCycleCounter&) = delete;
  PerfCycleCounter& operator=(const PerfCycleCounter&) = delete;

  // Tries a counter on the calling thread; empty string when it works,
  // otherwise why not.
  static std::string probe();

  // Cycles the thread ran since its counter was opened; nullopt when the
  // counter cannot be opened or read (thread gone).
  std::optional<uint64_t> read(pid_t tid);
  void forget(pid_t tid);
  // Closes the counters of every thread not in `live_tids` (exited, or no
  // longer managed), so that descriptors do not pile up.
  void forgetExcept(std::span<const pid_t> live_tids);

 private:
  std::map<pid_t, int> fds_;
};

}  // namespace nk
