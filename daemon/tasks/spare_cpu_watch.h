#pragma once

namespace nk {

// Whether the host has CPU time nobody wants, for work that may wait: the
// live task graphs the daemon builds ahead of any reader. SCHED_IDLE alone
// does not keep such work off a busy node: an OpenMP runtime's idle workers
// spin in sched_yield, and every yield hands the core to the idle-class
// thread for the rest of a tick; a UTS-shaped program ran about a quarter
// slower for it. So only idle time counts as spare, never the builder's own
// time: on such a node that was the spinning workers' time, handed over by
// their yields (counted as spare, it kept the builder at half a CPU for the
// first second of every run of a 2-core program). A builder that fills the
// only idle CPU sees none spare the next interval and waits that one out:
// there it builds every other interval.
class SpareCpuWatch {
 public:
  struct Sample {
    double cpus = 0;       // the host's online CPUs
    double busy_cpus = 0;  // their utilisation summed over the interval
  };

  // `min_spare_cpus`: how much idle time, in CPUs, is enough to build on.
  explicit SpareCpuWatch(double min_spare_cpus = 0.5) : min_spare_cpus_(min_spare_cpus) {}

  void observe(const Sample& sample);
  // The sample about to be taken began too long ago to tell (before the
  // builder had anything live to build, say an idle host before a program
  // started): nothing is spare until the next one.
  void forget();
  // Spare CPU in the last interval; true until there is a sample.
  bool spare() const { return spare_; }
  double spareCpus() const { return spare_cpus_; }

 private:
  double min_spare_cpus_;
  bool spare_ = true;
  double spare_cpus_ = 0;
};

}  // namespace nk
