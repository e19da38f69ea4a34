#pragma once

#include <string>
#include <vector>

namespace nk::sim {

// One phase of an OpenMP program as the simulator runs it. Work is counted
// in seconds of one core at the reference (highest) frequency, so that a
// phase's runtime at frequency f is work * ((1 - m) * f_ref / f + m).
struct WorkloadPhase {
  std::string name;
  double work_core_s = 0.0;     // total work of the phase, all threads together
  double parallel_fraction = 1.0;  // Amdahl's p: the rest runs on one thread
  double memory_boundness = 0.0;   // m: share of the time that does not scale with f
};

// A program: phases run in order, `repeat` times (an iterative solver's time
// steps). Sources of the numbers live beside each model (issue 4).
struct WorkloadModel {
  std::string name;
  std::vector<WorkloadPhase> phases;
  int repeat = 1;
};

}  // namespace nk::sim
