#include "platform/emulated/node_profile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "testlib/temp_dir.h"

namespace nk {
namespace {

std::filesystem::path profilesDir() {
  const char* dir = std::getenv("NK_PROFILES_DIR");
  return dir ? dir : "profiles";
}

// A complete, valid profile; tests break one thing at a time.
const std::string kValid = R"(name = "test-node"
cpu_model = "Test CPU"

[topology]
packages = 2
cores_per_package = 4

[cpufreq]
driver = "acpi-cpufreq"
frequencies_khz = [1000000, 1500000, 2000000]
governors = ["ondemand", "userspace", "performance", "powersave"]
default_governor = "ondemand"

[power]
voltage_min_v = 0.9
voltage_max_v = 1.2
capacitance_nf = 2
leakage_current_ma = 1000
leakage_current_ma_per_c = 10
leakage_ref_c = 50
uncore_power_w = 8

[thermal]
ambient_c = 25
core_heat_capacity_j_per_k = 0.5
core_to_heatsink_k_per_w = 1.5
core_to_neighbour_k_per_w = 4
heatsink_heat_capacity_j_per_k = 80
heatsink_to_ambient_k_per_w = 0.3
tjmax_c = 95

[rapl]
max_energy_range_uj = 262143328850
default_limit_w = 80
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in the profile";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

void expectSameProfile(const NodeProfile& a, const NodeProfile& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.cpu_model, b.cpu_model);
  EXPECT_EQ(a.packages, b.packages);
  EXPECT_EQ(a.cores_per_package, b.cores_per_package);
  EXPECT_EQ(a.threads_per_core, b.threads_per_core);
  EXPECT_EQ(a.driver, b.driver);
  EXPECT_EQ(a.frequencies_khz, b.frequencies_khz);
  EXPECT_EQ(a.governors, b.governors);
  EXPECT_EQ(a.default_governor, b.default_governor);
  EXPECT_EQ(a.transition_latency_ns, b.transition_latency_ns);
  EXPECT_DOUBLE_EQ(a.voltage_min_v, b.voltage_min_v);
  EXPECT_DOUBLE_EQ(a.voltage_max_v, b.voltage_max_v);
  EXPECT_DOUBLE_EQ(a.capacitance_f, b.capacitance_f);
  EXPECT_DOUBLE_EQ(a.leakage_current_a, b.leakage_current_a);
  EXPECT_DOUBLE_EQ(a.leakage_current_a_per_c, b.leakage_current_a_per_c);
  EXPECT_DOUBLE_EQ(a.leakage_ref_c, b.leakage_ref_c);
  EXPECT_DOUBLE_EQ(a.uncore_power_w, b.uncore_power_w);
  EXPECT_DOUBLE_EQ(a.idle_utilisation, b.idle_utilisation);
  EXPECT_DOUBLE_EQ(a.ambient_c, b.ambient_c);
  EXPECT_DOUBLE_EQ(a.core_heat_capacity_j_per_k, b.core_heat_capacity_j_per_k);
  EXPECT_DOUBLE_EQ(a.core_to_heatsink_k_per_w, b.core_to_heatsink_k_per_w);
  EXPECT_DOUBLE_EQ(a.core_to_neighbour_k_per_w, b.core_to_neighbour_k_per_w);
  EXPECT_DOUBLE_EQ(a.heatsink_heat_capacity_j_per_k, b.heatsink_heat_capacity_j_per_k);
  EXPECT_DOUBLE_EQ(a.heatsink_to_ambient_k_per_w, b.heatsink_to_ambient_k_per_w);
  EXPECT_DOUBLE_EQ(a.tjmax_c, b.tjmax_c);
  EXPECT_EQ(a.rapl_max_energy_range_uj, b.rapl_max_energy_range_uj);
  EXPECT_DOUBLE_EQ(a.rapl_default_limit_w, b.rapl_default_limit_w);
}

TEST(NodeProfile, ShippedXeonProfileEqualsTheBuiltInDefault) {
  auto loaded = NodeProfile::load(profilesDir() / "xeon-e5-2630.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  expectSameProfile(*loaded, NodeProfile::xeonE5_2630());
}

TEST(NodeProfile, BuiltInDefaultIsTheSeedPlatform) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  EXPECT_TRUE(p.validate().ok());
  EXPECT_EQ(p.cores(), 12u);
  ASSERT_EQ(p.frequencies_khz.size(), 15u);
  EXPECT_EQ(p.frequencies_khz.front(), 1200000u);
  EXPECT_EQ(p.frequencies_khz[1], 1300000u);
  EXPECT_EQ(p.frequencies_khz.back(), 2600000u);
  EXPECT_DOUBLE_EQ(p.voltage_min_v, 0.98);
  EXPECT_DOUBLE_EQ(p.voltage_max_v, 1.35);
  EXPECT_EQ(p.hwlocSynthetic(), "package:2 core:6 pu:1");
}

TEST(NodeProfile, ShippedLaptopProfileIsIntelPstate) {
  auto loaded = NodeProfile::load(profilesDir() / "intel-pstate-laptop.toml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const NodeProfile& p = *loaded;
  EXPECT_EQ(p.name, "intel-pstate-laptop");
  EXPECT_EQ(p.driver, "intel_pstate");
  EXPECT_EQ(p.packages, 1u);
  EXPECT_EQ(p.cores_per_package, 4u);
  EXPECT_EQ(p.threads_per_core, 2u);
  ASSERT_EQ(p.frequencies_khz.size(), 29u);
  EXPECT_EQ(p.frequencies_khz.front(), 800000u);
  EXPECT_EQ(p.frequencies_khz.back(), 3600000u);
  EXPECT_EQ(p.governors, (std::vector<std::string>{"performance", "powersave"}));
  EXPECT_EQ(p.default_governor, "powersave");
  EXPECT_EQ(p.hwlocSynthetic(), "package:1 core:4 pu:2");
}

TEST(NodeProfile, ParsesAnExplicitFrequencyListAndDefaults) {
  auto p = NodeProfile::parse(kValid, "test.toml");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->frequencies_khz, (std::vector<uint64_t>{1000000, 1500000, 2000000}));
  EXPECT_DOUBLE_EQ(p->capacitance_f, 2e-9);
  EXPECT_DOUBLE_EQ(p->leakage_current_a, 1.0);
  EXPECT_DOUBLE_EQ(p->leakage_current_a_per_c, 0.01);
  // Optional keys keep their defaults.
  EXPECT_EQ(p->threads_per_core, 1u);
  EXPECT_DOUBLE_EQ(p->idle_utilisation, 0.0);
}

TEST(NodeProfile, SyntaxErrorReportsLineAndColumn) {
  std::string broken = replaced(kValid, "packages = 2\n", "packages = = 2\n");
  auto p = NodeProfile::parse(broken, "broken.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  // "packages" is on line 5 of kValid.
  EXPECT_EQ(p.error().message.rfind("broken.toml:5:", 0), 0u) << p.error().message;
}

TEST(NodeProfile, UnterminatedStringReportsItsLine) {
  auto p = NodeProfile::parse("name = \"x\ncpu_model = \"y\"\n", "p.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message.rfind("p.toml:1:", 0), 0u) << p.error().message;
}

TEST(NodeProfile, UnknownKeyIsAnErrorWithItsLine) {
  std::string typo = replaced(kValid, "capacitance_nf = 2\n", "capacitance_nf = 2\ncapacitanse_nf = 3\n");
  auto p = NodeProfile::parse(typo, "typo.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("unknown key 'power.capacitanse_nf'"), std::string::npos) << p.error().message;
  EXPECT_EQ(p.error().message.rfind("typo.toml:18:", 0), 0u) << p.error().message;
}

TEST(NodeProfile, UnknownSectionIsAnError) {
  auto p = NodeProfile::parse(kValid + "\n[turbo]\nenabled = true\n", "t.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("unknown key 'turbo'"), std::string::npos) << p.error().message;
}

TEST(NodeProfile, WrongTypeNamesTheKey) {
  auto p = NodeProfile::parse(replaced(kValid, "packages = 2", "packages = \"two\""), "t.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("topology.packages: expected an integer, found a string"), std::string::npos)
      << p.error().message;

  auto q = NodeProfile::parse(replaced(kValid, "ambient_c = 25", "ambient_c = [25]"), "t.toml");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message.find("thermal.ambient_c: expected a number"), std::string::npos) << q.error().message;

  auto r = NodeProfile::parse(replaced(kValid, "[1000000, 1500000, 2000000]", "[1000000, 1.5]"), "t.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cpufreq.frequencies_khz"), std::string::npos) << r.error().message;
}

TEST(NodeProfile, MissingKeyIsNamed) {
  auto p = NodeProfile::parse(replaced(kValid, "tjmax_c = 95\n", ""), "t.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("missing key 'thermal.tjmax_c'"), std::string::npos) << p.error().message;

  auto q = NodeProfile::parse(replaced(kValid, "[rapl]\n", "[rapl_x]\n"), "t.toml");
  ASSERT_FALSE(q.ok());
}

TEST(NodeProfile, FrequencyRangeFormGeneratesTheTable) {
  auto p = NodeProfile::parse(replaced(kValid, "frequencies_khz = [1000000, 1500000, 2000000]",
                                       "min_khz = 1000000\nmax_khz = 1300000\nstep_khz = 100000"),
                              "t.toml");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->frequencies_khz, (std::vector<uint64_t>{1000000, 1100000, 1200000, 1300000}));
}

TEST(NodeProfile, BothFrequencyFormsIsAnError) {
  auto p = NodeProfile::parse(replaced(kValid, "driver = ", "min_khz = 1000000\ndriver = "), "t.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("not both"), std::string::npos) << p.error().message;
}

struct BadValue {
  const char* from;
  const char* to;
  const char* expected_in_message;
};

class NodeProfileRange : public ::testing::TestWithParam<BadValue> {};

TEST_P(NodeProfileRange, IsRejectedNamingTheKey) {
  const BadValue& bad = GetParam();
  auto p = NodeProfile::parse(replaced(kValid, bad.from, bad.to), "range.toml");
  ASSERT_FALSE(p.ok()) << "accepted " << bad.to;
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(p.error().message.find(bad.expected_in_message), std::string::npos) << p.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Bad, NodeProfileRange,
    ::testing::Values(
        BadValue{"packages = 2", "packages = 0", "topology.packages"},
        BadValue{"packages = 2", "packages = 65", "topology.packages"},
        BadValue{"packages = 2", "packages = -1", "topology.packages: must not be negative"},
        BadValue{"packages = 2", "packages = 99999999999", "topology.packages"},
        BadValue{"cores_per_package = 4", "cores_per_package = 257", "topology.cores_per_package"},
        BadValue{"[1000000, 1500000, 2000000]", "[1000000, 2000000, 1500000]", "strictly ascending"},
        BadValue{"[1000000, 1500000, 2000000]", "[1000000, 1000000]", "strictly ascending"},
        BadValue{"[1000000, 1500000, 2000000]", "[0, 1000000]", "cpufreq.frequencies_khz"},
        BadValue{"[1000000, 1500000, 2000000]", "[]", "cpufreq.frequencies_khz must not be empty"},
        BadValue{"frequencies_khz = [1000000, 1500000, 2000000]",
                 "min_khz = 1000\nmax_khz = 100000000\nstep_khz = 1", "more than 512"},
        BadValue{"frequencies_khz = [1000000, 1500000, 2000000]",
                 "min_khz = 1000000\nmax_khz = 2050000\nstep_khz = 100000", "multiple of step_khz"},
        BadValue{"voltage_min_v = 0.9", "voltage_min_v = 0.4", "power.voltage_min_v"},
        BadValue{"voltage_max_v = 1.2", "voltage_max_v = 2.1", "power.voltage_max_v"},
        BadValue{"voltage_min_v = 0.9", "voltage_min_v = 1.3", "must not exceed"},
        BadValue{"capacitance_nf = 2", "capacitance_nf = 0", "power.capacitance_nf"},
        BadValue{"capacitance_nf = 2", "capacitance_nf = nan", "power.capacitance_nf"},
        BadValue{"capacitance_nf = 2", "capacitance_nf = inf", "power.capacitance_nf"},
        BadValue{"core_to_heatsink_k_per_w = 1.5", "core_to_heatsink_k_per_w = -1.5",
                 "thermal.core_to_heatsink_k_per_w"},
        BadValue{"heatsink_heat_capacity_j_per_k = 80", "heatsink_heat_capacity_j_per_k = 0",
                 "thermal.heatsink_heat_capacity_j_per_k"},
        BadValue{"leakage_current_ma_per_c = 10", "leakage_current_ma_per_c = 1000", "thermal runaway"},
        BadValue{"governors = [\"ondemand\", \"userspace\", \"performance\", \"powersave\"]", "governors = []",
                 "cpufreq.governors must not be empty"},
        BadValue{"\"powersave\"]", "\"turbo\"]", "unknown governor 'turbo'"},
        BadValue{"default_governor = \"ondemand\"", "default_governor = \"schedutil\"",
                 "cpufreq.default_governor"},
        BadValue{"driver = \"acpi-cpufreq\"", "driver = \"amd-pstate\"", "cpufreq.driver"},
        BadValue{"driver = \"acpi-cpufreq\"", "driver = \"intel_pstate\"", "intel_pstate"},
        BadValue{"max_energy_range_uj = 262143328850", "max_energy_range_uj = 0", "rapl.max_energy_range_uj"},
        BadValue{"default_limit_w = 80", "default_limit_w = 0", "rapl.default_limit_w"},
        BadValue{"tjmax_c = 95", "tjmax_c = 20", "thermal.tjmax_c"},
        BadValue{"name = \"test-node\"", "name = \"\"", "name"},
        BadValue{"name = \"test-node\"", "name = \"a/b\"", "name"}));

TEST(NodeProfile, ValidateChecksAStructBuiltInCode) {
  NodeProfile p = NodeProfile::xeonE5_2630();
  p.cores_per_package = 0;
  EXPECT_FALSE(p.validate().ok());
  p = NodeProfile::xeonE5_2630();
  p.voltage_min_v = 1.4;
  EXPECT_FALSE(p.validate().ok());
  p = NodeProfile::xeonE5_2630();
  p.driver = "intel_pstate";  // with ondemand and friends: refused
  EXPECT_FALSE(p.validate().ok());
}

TEST(NodeProfile, LoadReportsAMissingFile) {
  test::TempDir dir;
  auto p = NodeProfile::load(dir.path() / "absent.toml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kNotFound);
}

TEST(NodeProfile, LoadNamesTheFileInErrors) {
  test::TempDir dir;
  std::filesystem::path path = dir.path() / "bad.toml";
  std::ofstream(path) << "name = \"x\"\n[topology\n";
  auto p = NodeProfile::load(path);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message.rfind(path.string() + ":2:", 0), 0u) << p.error().message;
}

}  // namespace
}  // namespace nk
