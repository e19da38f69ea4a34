#pragma once

// Profiles shared by the emulated-node tests.

#include <cstdint>

#include "platform/emulated/node_profile.h"

namespace nk::test {

// An intel_pstate machine (1 package, 4 cores x 2 threads, 0.8-3.6 GHz),
// built from the default profile so only the differences are spelled out.
inline NodeProfile laptopProfile() {
  NodeProfile p = NodeProfile::xeonE5_2630();
  p.name = "laptop";
  p.packages = 1;
  p.cores_per_package = 4;
  p.threads_per_core = 2;
  p.driver = "intel_pstate";
  p.governors = {"performance", "powersave"};
  p.default_governor = "powersave";
  p.frequencies_khz.clear();
  for (uint64_t khz = 800000; khz <= 3600000; khz += 100000) p.frequencies_khz.push_back(khz);
  return p;
}

}  // namespace nk::test
