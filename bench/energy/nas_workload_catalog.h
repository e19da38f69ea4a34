#pragma once

#include <span>
#include <string_view>

#include "workload_model.h"

namespace nk::sim {

// Workload models of the NAS Parallel Benchmarks (OpenMP, NPB 3.x) Shafik
// et al. run: bt, cg, dc, ep, ft, is, lu, mg, sp, ua in classes B and C (dc in
// class B only, as in their Fig. 2). Where each number comes from is
// written beside it in nas_workload_catalog.cc.
class NasWorkloadCatalog {
 public:
  static std::span<const WorkloadModel> all();
  static const WorkloadModel* find(std::string_view name);  // "cg.B"; nullptr if unknown
  // Runtime of `model` with `threads` threads, every core at `f_ratio` of
  // the reference frequency (the closed form the simulator must reproduce).
  static double closedFormSeconds(const WorkloadModel& model, uint32_t threads, double f_ratio);
};

}  // namespace nk::sim
