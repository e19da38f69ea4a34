#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nk::sim {

// One phase of an OpenMP program as the simulator runs it. Work is counted
// in seconds of one thread at the reference (highest) frequency. Of that
// time, a share m waits on memory (does not scale with frequency), a share
// io is blocked in the kernel (no load on the core), and the rest computes
// (scales with 1/f). At D threads:
//   serial   = W (1-p) [(1-m-io) f_ref/f_lead + m + io]
//   parallel = W p [(1-m-io) f_ref/f_slowest / D + m / min(D, S) + io / D]
// where S is the thread count at which the memory system saturates.
struct WorkloadPhase {
  std::string name;
  double work_core_s = 0.0;        // W
  double parallel_fraction = 1.0;  // Amdahl's p
  double memory_boundness = 0.0;   // m
  uint32_t bandwidth_threads = 0;  // S; 0 = the memory part scales with D
  double io_fraction = 0.0;        // io
};

// A program: the prologue once, then the phases in order `repeat` times
// (an iterative solver's time steps).
struct WorkloadModel {
  std::string name;
  std::vector<WorkloadPhase> phases;
  int repeat = 1;
  std::vector<WorkloadPhase> prologue;
};

}  // namespace nk::sim
