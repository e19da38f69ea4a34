#include "hwloc_topology.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "sysfs_file.h"

namespace nk {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology_t topology) const { hwloc_topology_destroy(topology); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string errnoText() { return std::strerror(errno); }

uint32_t logicalIndexOfAncestor(hwloc_topology_t topology, hwloc_obj_t obj, hwloc_obj_type_t type) {
  hwloc_obj_t ancestor = hwloc_get_ancestor_obj_by_type(topology, type, obj);
  return ancestor ? ancestor->logical_index : 0;
}

// hwloc 2 hangs NUMA nodes off the tree as memory children, so they are
// never ancestors of a core: match them by cpuset instead.
uint32_t numaNodeOf(hwloc_topology_t topology, hwloc_obj_t core) {
  hwloc_obj_t node = nullptr;
  while ((node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) != nullptr) {
    if (node->cpuset && core->cpuset && hwloc_bitmap_intersects(node->cpuset, core->cpuset))
      return node->logical_index;
  }
  return 0;
}

std::string cpuModel(hwloc_topology_t topology) {
  hwloc_obj_t package = hwloc_get_obj_by_type(topology, HWLOC_OBJ_PACKAGE, 0);
  if (package) {
    if (const char* model = hwloc_obj_get_info_by_name(package, "CPUModel")) return model;
  }
  // Some platforms (and hand-written XML) put it on the machine instead.
  if (const char* model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topology), "CPUModel")) return model;
  return {};
}

NodeTopology convert(hwloc_topology_t topology) {
  NodeTopology node;
  node.cpu_model = cpuModel(topology);
  const int packages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  const int numa_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  const int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  node.pus = pus > 0 ? static_cast<uint32_t>(pus) : 0;
  node.numa_nodes = numa_nodes > 0 ? static_cast<uint32_t>(numa_nodes) : 0;

  // A topology without core objects (some VMs, "package:1 pu:4") still has
  // PUs; each then stands for a core, so callers always get cores.
  hwloc_obj_type_t core_type = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  std::vector<hwloc_obj_t> objects;
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_obj_by_type(topology, core_type, obj)) != nullptr) objects.push_back(obj);
  // Logical order already follows the tree, hence packages; the sort only
  // makes "package order" a guarantee instead of an hwloc habit.
  std::stable_sort(objects.begin(), objects.end(), [&](hwloc_obj_t a, hwloc_obj_t b) {
    return logicalIndexOfAncestor(topology, a, HWLOC_OBJ_PACKAGE) <
           logicalIndexOfAncestor(topology, b, HWLOC_OBJ_PACKAGE);
  });

  std::vector<uint32_t> cores_in_package;
  for (hwloc_obj_t core : objects) {
    CoreInfo info;
    info.id = static_cast<uint32_t>(node.cores.size());
    info.package = logicalIndexOfAncestor(topology, core, HWLOC_OBJ_PACKAGE);
    if (cores_in_package.size() <= info.package) cores_in_package.resize(info.package + 1, 0);
    info.core_id = cores_in_package[info.package]++;
    info.numa_node = numaNodeOf(topology, core);
    info.os_core_id = core->os_index == HWLOC_UNKNOWN_INDEX ? info.core_id : core->os_index;
    if (core->type == HWLOC_OBJ_PU) {
      info.cpus.push_back(core->os_index);
    } else {
      hwloc_obj_t pu = nullptr;
      while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, core->cpuset, HWLOC_OBJ_PU, pu)) != nullptr)
        info.cpus.push_back(pu->os_index);
    }
    std::sort(info.cpus.begin(), info.cpus.end());
    info.host_cpus = info.cpus;
    node.cores.push_back(std::move(info));
  }
  // Without package objects everything sits in one implicit package 0.
  node.packages = packages > 0 ? static_cast<uint32_t>(packages) : (node.cores.empty() ? 0 : 1);
  return node;
}

// `configure` picks the source (synthetic, XML) between init and load.
Result<NodeTopology> load(const std::string& what, const std::function<Status(hwloc_topology_t)>& configure) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return internalError("hwloc_topology_init failed: " + errnoText());
  TopologyPtr topology(raw);
  if (configure) {
    Status status = configure(topology.get());
    if (!status) return status.error();
  }
  if (hwloc_topology_load(topology.get()) != 0)
    return unavailable("hwloc could not load the topology of " + what + ": " + errnoText());
  NodeTopology node = convert(topology.get());
  if (node.cores.empty()) return unavailable("hwloc found no cores in the topology of " + what);
  return node;
}

}  // namespace

Result<NodeTopology> HwlocTopology::fromHost() { return load("this host", nullptr); }

Result<NodeTopology> HwlocTopology::fromSynthetic(std::string_view description) {
  std::string desc(description);
  return load("synthetic '" + desc + "'", [&](hwloc_topology_t topology) -> Status {
    if (hwloc_topology_set_synthetic(topology, desc.c_str()) != 0)
      return invalidArgument("invalid hwloc synthetic description '" + desc + "' (e.g. \"package:2 core:6 pu:1\")");
    return {};
  });
}

Result<NodeTopology> HwlocTopology::fromXml(std::string_view path) {
  std::string file(path);
  // hwloc's own error for a missing file is a bare EINVAL; say what is wrong.
  if (!SysfsFile::exists(file)) return notFound(file + ": No such file or directory");
  return load(file, [&](hwloc_topology_t topology) -> Status {
    if (hwloc_topology_set_xml(topology, file.c_str()) != 0)
      return invalidArgument(file + ": not an hwloc XML topology: " + errnoText());
    return {};
  });
}

}  // namespace nk
