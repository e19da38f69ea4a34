#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nk {

struct CoreInfo {
  uint32_t id = 0;        // 0..N-1 in package order
  uint32_t package = 0;
  uint32_t core_id = 0;   // index inside the package
  uint32_t numa_node = 0;
  std::vector<uint32_t> cpus;       // logical CPUs (PUs), OS numbering
  std::vector<uint32_t> host_cpus;  // where this core's threads really run
  // The kernel's core id (hwloc os_index). On real Xeons it has gaps, and
  // it is what a real host's coretemp puts in "Core N".
  uint32_t os_core_id = 0;
};

// The node as the daemon sees it. Plain data so that domain code and tests
// need no hwloc.
struct NodeTopology {
  std::string cpu_model;
  uint32_t packages = 0;
  uint32_t numa_nodes = 0;
  uint32_t pus = 0;
  std::vector<CoreInfo> cores;

  // Core whose cpus contain `cpu`, or nullptr.
  const CoreInfo* coreOfCpu(uint32_t cpu) const;
  const CoreInfo* coreAt(uint32_t package, uint32_t core_id) const;
};

}  // namespace nk
