#pragma once

#include <string_view>

#include "base/result.h"
#include "node_topology.h"

namespace nk {

// Reads the node's topology through hwloc: packages, cores, PUs, NUMA nodes.
class HwlocTopology {
 public:
  // The machine this process runs on.
  static Result<NodeTopology> fromHost();
  // An hwloc synthetic description, e.g. "package:2 core:6 pu:1" (what the
  // emulated node uses, so emulated topologies go through hwloc too).
  static Result<NodeTopology> fromSynthetic(std::string_view description);
  // An hwloc XML export (lstopo foo.xml), for tests of other machines.
  static Result<NodeTopology> fromXml(std::string_view path);
};

}  // namespace nk
