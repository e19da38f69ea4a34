#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace nk {

// How late this host runs threads, as the daemon measures it, turned into
// the factor its fault timeouts grow by: on a busy host a report, a
// heartbeat or a probe's answer is late without anything being wrong, and
// a timeout that stays fixed then calls the lateness a fault. Fed by the
// fault tree's thread (how late its periodic tick woke, remembered for
// `memory`) and by the kernel's CPU pressure (/proc/pressure/cpu "some
// avg10": the share of time some task waited for a CPU); the factor is the
// larger of what each says, from 1 up to `max_factor`. Read from any
// thread (the gRPC peer network scales its deadlines by it).
class SchedulingDelay {
 public:
  struct Options {
    double max_factor = 10;
    std::chrono::milliseconds memory{10000};
    // The factor at 100% CPU pressure is 1 + pressure_weight.
    double pressure_weight = 3;
  };

  SchedulingDelay() : SchedulingDelay(Options{}) {}
  explicit SchedulingDelay(Options options) : options_(options) {}

  // A thread due every `period` woke `lateness` after it was due, at `now_ns`.
  void tickLate(std::chrono::nanoseconds lateness, std::chrono::nanoseconds period, int64_t now_ns);
  // "some avg10" of /proc/pressure/cpu, 0 to 100; nullopt: not known (an
  // older kernel), so no longer counted.
  void cpuPressure(std::optional<double> some_avg10_percent);

  // For what waits on the host's other work (a rank's progress, a gRPC
  // answer served by the ordinary threads): the larger of both causes.
  double factor() const;
  // For what waits on the daemon's own raised threads only (a heartbeat is
  // sent and watched by the fault tree's thread): their measured lateness
  // alone. CPU pressure says that something waited, not that these threads
  // did; counting it made a killed node take 1.7 s to find under load.
  double threadFactor() const;
  // `timeout` grown by `factor`.
  static std::chrono::milliseconds scale(std::chrono::milliseconds timeout, double factor);
  // "2000 ms", or "2000 ms x3.5 for this host's scheduling delay = 7000 ms"
  // when grown: for the detail and evidence lines that quote a timeout.
  static std::string describe(std::chrono::milliseconds timeout, double factor);

 private:
  double fromTicksLocked() const;
  double boundedLocked(double factor) const;

  const Options options_;
  mutable std::mutex mutex_;
  std::deque<std::pair<int64_t, double>> late_ticks_;  // (when, lateness / period)
  double pressure_percent_ = 0;
};

}  // namespace nk
