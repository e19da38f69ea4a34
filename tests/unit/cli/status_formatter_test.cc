#include "cli/status_formatter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/table.h"

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

pb::Topology makeTopology() {
  pb::Topology topology;
  topology.set_hostname("node01");
  topology.set_cpu_model("Intel(R) Xeon(R) CPU E5-2630 0 @ 2.30GHz");
  topology.set_emulated(true);
  topology.set_profile("xeon-e5-2630");
  topology.set_packages(2);
  topology.set_numa_nodes(2);
  topology.set_pus(8);
  for (uint32_t id = 0; id < 4; ++id) {
    pb::Core* core = topology.add_cores();
    core->set_id(id);
    core->set_package(id / 2);
    core->set_core_id(id % 2);
    core->add_cpus(id * 2);
    core->add_cpus(id * 2 + 1);
  }
  return topology;
}

pb::TelemetrySnapshot makeSnapshot() {
  pb::TelemetrySnapshot snapshot;
  snapshot.set_timestamp_ns(1700000000LL * 1000000000LL);
  for (uint32_t id = 0; id < 4; ++id) {
    pb::CoreTelemetry* core = snapshot.add_cores();
    core->set_id(id);
    core->set_package(id / 2);
    core->set_cur_khz(id == 3 ? 1200000 : 2600000);
    core->set_min_khz(1200000);
    core->set_max_khz(2600000);
    core->set_governor(id == 1 ? "performance" : "ondemand");
    core->set_temperature_c(id == 2 ? kNaN : 50.0 + id);
    core->set_utilisation(id == 0 ? kNaN : 0.25 * id);
  }
  for (uint32_t id = 0; id < 2; ++id) {
    pb::PackageTelemetry* package = snapshot.add_packages();
    package->set_id(id);
    package->set_power_w(id == 0 ? 45.25 : 8.0);
    package->set_energy_j(id == 0 ? 12345.0 : 512.0);
    package->set_power_limit_w(id == 0 ? 80.0 : 0.0);
    package->set_power_limit_enabled(id == 0);
    package->set_temperature_c(id == 0 ? 61.0 : kNaN);
  }
  snapshot.set_node_power_w(53.25);
  return snapshot;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The block of lines that starts with the line beginning with `header`.
std::vector<std::string> block(const std::vector<std::string>& all, const std::string& header) {
  std::vector<std::string> out;
  bool inside = false;
  for (const auto& line : all) {
    if (line.rfind(header, 0) == 0 || (line.find(header) != std::string::npos && line.find_first_not_of(' ') == line.find(header)))
      inside = true;
    if (inside && line.empty()) break;
    if (inside) out.push_back(line);
  }
  return out;
}

TEST(StatusFormatterJson, HasTheKeysTheAcceptanceChecksUse) {
  auto parsed = nlohmann::json::parse(StatusFormatter::json(makeTopology(), makeSnapshot(), true));
  for (const char* key : {"hostname", "cpu_model", "emulated", "profile", "packages", "cores", "node_power_w",
                          "timestamp_ns"})
    EXPECT_TRUE(parsed.contains(key)) << key;
  EXPECT_EQ(parsed["hostname"], "node01");
  EXPECT_EQ(parsed["emulated"], true);
  EXPECT_EQ(parsed["profile"], "xeon-e5-2630");
  EXPECT_EQ(parsed["timestamp_ns"], 1700000000LL * 1000000000LL);

  ASSERT_EQ(parsed["cores"].size(), 4u);
  for (const auto& core : parsed["cores"])
    for (const char* key : {"id", "package", "core_id", "frequency_khz", "min_khz", "max_khz", "governor",
                            "temperature_c", "utilisation"})
      EXPECT_TRUE(core.contains(key)) << key;
  const auto& core3 = parsed["cores"][3];
  EXPECT_EQ(core3["id"], 3);
  EXPECT_EQ(core3["package"], 1);
  EXPECT_EQ(core3["core_id"], 1);
  EXPECT_EQ(core3["frequency_khz"], 1200000);
  EXPECT_EQ(core3["governor"], "ondemand");
  EXPECT_DOUBLE_EQ(core3["temperature_c"].get<double>(), 53.0);
  EXPECT_DOUBLE_EQ(core3["utilisation"].get<double>(), 0.75);

  ASSERT_EQ(parsed["packages"].size(), 2u);
  for (const auto& package : parsed["packages"])
    for (const char* key : {"id", "power_w", "energy_j", "power_limit_w", "power_limit_enabled", "temperature_c"})
      EXPECT_TRUE(package.contains(key)) << key;
  EXPECT_DOUBLE_EQ(parsed["packages"][0]["power_w"].get<double>(), 45.25);
  EXPECT_EQ(parsed["packages"][0]["power_limit_enabled"], true);
  EXPECT_DOUBLE_EQ(parsed["node_power_w"].get<double>(), 53.25);
}

TEST(StatusFormatterJson, NaNBecomesNull) {
  std::string text = StatusFormatter::json(makeTopology(), makeSnapshot(), false);
  EXPECT_EQ(text.find("NaN"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  auto parsed = nlohmann::json::parse(text);
  EXPECT_TRUE(parsed["cores"][2]["temperature_c"].is_null());
  EXPECT_TRUE(parsed["cores"][0]["utilisation"].is_null());
  EXPECT_TRUE(parsed["packages"][1]["temperature_c"].is_null());

  pb::TelemetrySnapshot snapshot = makeSnapshot();
  snapshot.set_node_power_w(kNaN);
  EXPECT_TRUE(nlohmann::json::parse(StatusFormatter::json(makeTopology(), snapshot, false))["node_power_w"].is_null());
}

TEST(StatusFormatterJson, CompactFormIsOneLine) {
  std::string text = StatusFormatter::json(makeTopology(), makeSnapshot(), false);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1);
}

TEST(StatusFormatterJson, CoreMissingFromTopologyHasNullCoreId) {
  pb::TelemetrySnapshot snapshot = makeSnapshot();
  snapshot.mutable_cores(0)->set_id(99);
  auto parsed = nlohmann::json::parse(StatusFormatter::json(makeTopology(), snapshot, false));
  EXPECT_TRUE(parsed["cores"][0]["core_id"].is_null());
}

TEST(StatusFormatterText, ShowsTopologyAndUnits) {
  std::string text = StatusFormatter::text(makeTopology(), makeSnapshot());
  EXPECT_NE(text.find("node01"), std::string::npos);
  EXPECT_NE(text.find("E5-2630"), std::string::npos);
  EXPECT_NE(text.find("emulated (profile xeon-e5-2630)"), std::string::npos);
  EXPECT_NE(text.find("2 packages, 4 cores, 8 PUs"), std::string::npos);
  EXPECT_NE(text.find("2.60 GHz"), std::string::npos);
  EXPECT_NE(text.find("1.20-2.60 GHz"), std::string::npos);
  EXPECT_NE(text.find("53.0 °C"), std::string::npos);
  EXPECT_NE(text.find("75 %"), std::string::npos);
  EXPECT_NE(text.find("45.2 W"), std::string::npos);
  EXPECT_NE(text.find("12.35 kJ"), std::string::npos);
  EXPECT_NE(text.find("512.0 J"), std::string::npos);
  EXPECT_NE(text.find("80.0 W (enabled)"), std::string::npos);
  EXPECT_NE(text.find("Node power  53.2 W"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
}

TEST(StatusFormatterText, CoreRowsAreAligned) {
  auto all = lines(StatusFormatter::text(makeTopology(), makeSnapshot()));
  auto cores = block(all, "CORE");
  ASSERT_EQ(cores.size(), 5u);  // header + 4 cores
  // The last column (UTIL) is right-aligned, so every line ends at the same
  // display column; the NaN temperature shows as "-".
  for (const auto& line : cores) EXPECT_EQ(Table::displayWidth(line), Table::displayWidth(cores[0])) << line;
  // Columns start where their header starts.
  size_t governor = cores[0].find("GOVERNOR");
  ASSERT_NE(governor, std::string::npos);
  EXPECT_EQ(cores[2].compare(governor, 11, "performance"), 0) << cores[2];
  EXPECT_EQ(cores[1].compare(governor, 8, "ondemand"), 0) << cores[1];
  EXPECT_NE(cores[3].find(" - "), std::string::npos) << cores[3];

  auto packages = block(all, "PACKAGE");
  ASSERT_EQ(packages.size(), 3u);
  for (const auto& line : packages) EXPECT_EQ(Table::displayWidth(line), Table::displayWidth(packages[0])) << line;
}

TEST(StatusFormatterText, RealNodeAndWarnings) {
  pb::Topology topology = makeTopology();
  topology.set_emulated(false);
  topology.clear_profile();
  pb::TelemetrySnapshot snapshot = makeSnapshot();
  snapshot.add_warnings("policy3/scaling_cur_freq vanished");
  std::string text = StatusFormatter::text(topology, snapshot);
  EXPECT_NE(text.find("real hardware"), std::string::npos);
  EXPECT_NE(text.find("warning: policy3/scaling_cur_freq vanished"), std::string::npos);
}

}  // namespace
}  // namespace nk::cli
