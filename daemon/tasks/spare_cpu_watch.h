#pragma once

namespace nk {

// Whether the host has CPU time nobody wants, for work that may wait: the
// live task graphs the daemon builds ahead of any reader. SCHED_IDLE alone
// does not keep such work off a busy node: an OpenMP runtime's idle workers
// spin in sched_yield, and every yield hands the core to the idle-class
// thread for the rest of a tick; a UTS-shaped program ran about a quarter
// slower for it. The builder's own CPU time counts as spare (it would be
// idle without it), so building does not talk itself out of the time it
// was given.
class SpareCpuWatch {
 public:
  struct Sample {
    double cpus = 0;        // the host's online CPUs
    double busy_cpus = 0;   // their utilisation summed over the interval
    double own_cpus = 0;    // the watcher's own thread's share of a CPU over it
  };

  // `min_spare_cpus`: how much idle time, in CPUs, is enough to build on.
  explicit SpareCpuWatch(double min_spare_cpus = 0.5) : min_spare_cpus_(min_spare_cpus) {}

  void observe(const Sample& sample);
  // Spare CPU in the last interval; true until there is a sample.
  bool spare() const { return spare_; }
  double spareCpus() const { return spare_cpus_; }

 private:
  double min_spare_cpus_;
  bool spare_ = true;
  double spare_cpus_ = 0;
};

}  // namespace nk
