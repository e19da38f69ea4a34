#include "node_topology.h"

#include <algorithm>

namespace nk {

// Linear scans: a node has at most a few hundred cores and these are not on
// a hot path, so an index would only be one more thing to keep in sync.
const CoreInfo* NodeTopology::coreOfCpu(uint32_t cpu) const {
  for (const CoreInfo& core : cores) {
    if (std::find(core.cpus.begin(), core.cpus.end(), cpu) != core.cpus.end()) return &core;
  }
  return nullptr;
}

const CoreInfo* NodeTopology::coreAt(uint32_t package, uint32_t core_id) const {
  for (const CoreInfo& core : cores) {
    if (core.package == package && core.core_id == core_id) return &core;
  }
  return nullptr;
}

}  // namespace nk
