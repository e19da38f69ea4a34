#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace nk {

// One thread's cumulative counters at one moment.
struct ThreadReading {
  pid_t tid = 0;
  uint64_t run_ns = 0;   // schedstat: on a CPU
  uint64_t wait_ns = 0;  // schedstat: runnable, waiting for a CPU
  std::optional<uint64_t> cycles;  // perf, when available
};

// What a thread did between two readings.
struct ThreadActivity {
  double busy = 0.0;   // fraction of the interval it was runnable, 0..1
  double cpu_s = 0.0;  // CPU time it got
  double interval_s = 0.0;
  std::optional<double> cycles;
};

// Turns cumulative per-thread counters into per-interval activity, and the
// node's measured power into per-app shares. Pure: the caller reads the
// counters and the clock.
class AppLoadAccounting {
 public:
  // Activity since the previous reading of the same thread; nullopt for the
  // first one (or when a counter went backwards: a reused tid).
  std::optional<ThreadActivity> observe(const ThreadReading& reading, double now_s);
  void forgetExcept(std::span<const pid_t> live_tids);

  // The node's power split over the apps in proportion to how busy their
  // threads were. All of the node's draw is charged to the apps, idle cores
  // and uncore included: a budget then bounds what the node really draws.
  static std::vector<double> apportionPower(double node_power_w, std::span<const double> app_busy);

 private:
  struct Last {
    ThreadReading reading;
    double time_s = 0.0;
  };
  std::map<pid_t, Last> last_;
};

}  // namespace nk
