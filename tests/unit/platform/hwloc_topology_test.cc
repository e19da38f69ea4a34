#include "platform/hwloc_topology.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "fake_sysfs.h"

namespace nk {
namespace {

TEST(HwlocTopology, TwoPackagesOfSixCores) {
  auto topology = HwlocTopology::fromSynthetic("package:2 core:6 pu:1");
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  const NodeTopology& t = *topology;
  EXPECT_EQ(t.packages, 2u);
  EXPECT_EQ(t.pus, 12u);
  EXPECT_EQ(t.numa_nodes, 1u);
  ASSERT_EQ(t.cores.size(), 12u);
  for (uint32_t i = 0; i < 12; ++i) {
    const CoreInfo& core = t.cores[i];
    EXPECT_EQ(core.id, i);
    EXPECT_EQ(core.package, i / 6) << "core " << i;
    EXPECT_EQ(core.core_id, i % 6) << "core " << i;
    EXPECT_EQ(core.numa_node, 0u);
    EXPECT_EQ(core.cpus, (std::vector<uint32_t>{i}));
    EXPECT_EQ(core.host_cpus, core.cpus);
  }
}

TEST(HwlocTopology, TwoThreadsPerCore) {
  auto topology = HwlocTopology::fromSynthetic("package:1 core:4 pu:2");
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  const NodeTopology& t = *topology;
  EXPECT_EQ(t.packages, 1u);
  EXPECT_EQ(t.pus, 8u);
  ASSERT_EQ(t.cores.size(), 4u);
  std::vector<uint32_t> all;
  for (const CoreInfo& core : t.cores) {
    EXPECT_EQ(core.cpus.size(), 2u);
    EXPECT_EQ(core.package, 0u);
    all.insert(all.end(), core.cpus.begin(), core.cpus.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(t.cores[1].core_id, 1u);
}

TEST(HwlocTopology, NumaNodesInsidePackages) {
  auto topology = HwlocTopology::fromSynthetic("package:2 numa:2 core:3 pu:1");
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  const NodeTopology& t = *topology;
  EXPECT_EQ(t.packages, 2u);
  EXPECT_EQ(t.numa_nodes, 4u);
  ASSERT_EQ(t.cores.size(), 12u);
  for (uint32_t i = 0; i < 12; ++i) {
    EXPECT_EQ(t.cores[i].numa_node, i / 3) << "core " << i;
    EXPECT_EQ(t.cores[i].package, i / 6) << "core " << i;
    EXPECT_EQ(t.cores[i].core_id, i % 6) << "core " << i;
  }
}

TEST(HwlocTopology, LookupByCpuAndByPackageCore) {
  auto topology = HwlocTopology::fromSynthetic("package:2 core:2 pu:2");
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  const NodeTopology& t = *topology;
  for (const CoreInfo& core : t.cores) {
    for (uint32_t cpu : core.cpus) {
      const CoreInfo* found = t.coreOfCpu(cpu);
      ASSERT_NE(found, nullptr) << "cpu " << cpu;
      EXPECT_EQ(found->id, core.id);
    }
    EXPECT_EQ(t.coreAt(core.package, core.core_id), &core);
  }
  EXPECT_EQ(t.coreOfCpu(8), nullptr);
  EXPECT_EQ(t.coreAt(2, 0), nullptr);
  EXPECT_EQ(t.coreAt(1, 2), nullptr);
}

TEST(HwlocTopology, RejectsABadSyntheticDescription) {
  auto topology = HwlocTopology::fromSynthetic("package:two core:x");
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(topology.error().message.find("package:two core:x"), std::string::npos);
}

TEST(HwlocTopology, FromHostSeesThisMachine) {
  auto topology = HwlocTopology::fromHost();
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  const NodeTopology& t = *topology;
  EXPECT_GE(t.packages, 1u);
  EXPECT_GE(t.cores.size(), 1u);
  EXPECT_GE(t.pus, t.cores.size());
  uint32_t cpus = 0;
  for (const CoreInfo& core : t.cores) cpus += static_cast<uint32_t>(core.cpus.size());
  EXPECT_EQ(cpus, t.pus);
  // This process runs on one of them.
  long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  EXPECT_LE(t.pus, static_cast<uint32_t>(online));
}

TEST(HwlocTopology, FromXml) {
  test::FakeSysfs fs;
  // A minimal export: one package with a model string, two cores.
  fs.write("topo.xml", R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000001" complete_nodeset="0x00000001" allowed_nodeset="0x00000001" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <info name="CPUModel" value="Intel(R) Xeon(R) Test CPU @ 2.40GHz"/>
      <object type="Core" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4"/>
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
      </object>
      <object type="Core" os_index="8" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="6">
        <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="7"/>
        <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="8"/>
      </object>
    </object>
    <object type="NUMANode" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="9" local_memory="1073741824"/>
  </object>
</topology>
)");
  auto topology = HwlocTopology::fromXml(fs.path("topo.xml").string());
  ASSERT_TRUE(topology.ok()) << topology.error().message;
  EXPECT_EQ(topology->cpu_model, "Intel(R) Xeon(R) Test CPU @ 2.40GHz");
  ASSERT_EQ(topology->cores.size(), 2u);
  EXPECT_EQ(topology->cores[1].cpus, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(topology->cores[1].core_id, 1u);
  EXPECT_EQ(topology->cores[1].os_core_id, 8u);

  auto missing = HwlocTopology::fromXml(fs.path("nope.xml").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nope.xml: No such file or directory"), std::string::npos);
}

}  // namespace
}  // namespace nk
