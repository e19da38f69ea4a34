#include "node_profile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>

#include <toml++/toml.h>

// Only result.h and the standard library besides toml++: the fuzz target
// builds this file alone (tests/fuzz/meson.build).

namespace nk {

namespace {

constexpr std::string_view kKnownGovernors[] = {
    "conservative", "ondemand", "userspace", "powersave", "performance", "schedutil",
};
// intel_pstate in active mode registers setpolicy "governors" only.
constexpr std::string_view kIntelPstateGovernors[] = {"performance", "powersave"};

// Generous bounds that keep the arithmetic of the model and the tree far
// from overflow whatever a profile (or the fuzzer) says.
constexpr uint64_t kMaxFrequencyKhz = 100'000'000;  // 100 GHz
constexpr size_t kMaxFrequencies = 512;
constexpr size_t kMaxGovernors = 16;

bool contains(std::initializer_list<std::string_view> list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

template <size_t N>
bool contains(const std::string_view (&list)[N], std::string_view word) {
  return std::find(std::begin(list), std::end(list), word) != std::end(list);
}

const char* typeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
  }
}

std::string joinKey(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return std::string(prefix) + "." + std::string(key);
}

// Walks the parsed document and keeps the first error with the place it
// refers to, so a profile author sees "file:line:col: key: what is wrong".
class ProfileReader {
 public:
  explicit ProfileReader(std::string_view source) : source_(source) {}

  bool failed() const { return error_.has_value(); }
  const std::string& error() const { return *error_; }

  void fail(const toml::source_region& where, const std::string& message) {
    if (error_) return;
    if (where.begin.line > 0)
      error_ = source_ + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column) +
               ": " + message;
    else
      error_ = source_ + ": " + message;
  }
  void fail(const std::string& message) { fail(toml::source_region{}, message); }

  // Typos must not silently do nothing: every key has to be one we know.
  void checkKeys(const toml::table& table, std::string_view prefix, std::initializer_list<std::string_view> allowed) {
    for (auto&& [key, node] : table) {
      if (!contains(allowed, key.str())) fail(key.source(), "unknown key '" + joinKey(prefix, key.str()) + "'");
    }
  }

  const toml::table* section(const toml::table& root, std::string_view name) {
    const toml::node* node = root.get(name);
    if (!node) {
      fail("missing section [" + std::string(name) + "]");
      return nullptr;
    }
    if (!node->is_table()) {
      fail(node->source(), "'" + std::string(name) + "' must be a table, not " + typeName(node->type()));
      return nullptr;
    }
    return node->as_table();
  }

  // Null when absent (an error too if required) or of the wrong type.
  const toml::node* find(const toml::table& table, std::string_view prefix, std::string_view key, bool required) {
    const toml::node* node = table.get(key);
    if (!node && required) fail(table.source(), "missing key '" + joinKey(prefix, key) + "'");
    return node;
  }

  void readString(const toml::table& table, std::string_view prefix, std::string_view key, std::string& out,
                  bool required = true) {
    const toml::node* node = find(table, prefix, key, required);
    if (!node) return;
    if (!node->is_string()) return wrongType(*node, prefix, key, "a string");
    out = node->as_string()->get();
  }

  template <typename T>
  void readUnsigned(const toml::table& table, std::string_view prefix, std::string_view key, T& out,
                    bool required = true) {
    const toml::node* node = find(table, prefix, key, required);
    if (!node) return;
    auto value = unsignedValue(*node, prefix, key);
    if (!value) return;
    if (*value > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      return fail(node->source(), joinKey(prefix, key) + ": " + std::to_string(*value) + " is too large");
    out = static_cast<T>(*value);
  }

  // Integers are accepted where a real is expected: "ambient_c = 25" is
  // what people write.
  void readDouble(const toml::table& table, std::string_view prefix, std::string_view key, double scale,
                  double& out, bool required = true) {
    const toml::node* node = find(table, prefix, key, required);
    if (!node) return;
    double value = 0;
    if (node->is_floating_point()) value = node->as_floating_point()->get();
    else if (node->is_integer()) value = static_cast<double>(node->as_integer()->get());
    else return wrongType(*node, prefix, key, "a number");
    if (!std::isfinite(value)) return fail(node->source(), joinKey(prefix, key) + ": must be a finite number");
    out = value * scale;
  }

  void readStringArray(const toml::table& table, std::string_view prefix, std::string_view key,
                       std::vector<std::string>& out, size_t max_items) {
    const toml::node* node = find(table, prefix, key, true);
    if (!node) return;
    if (!node->is_array()) return wrongType(*node, prefix, key, "an array of strings");
    const toml::array& array = *node->as_array();
    if (array.size() > max_items)
      return fail(node->source(), joinKey(prefix, key) + ": more than " + std::to_string(max_items) + " entries");
    out.clear();
    for (const toml::node& item : array) {
      if (!item.is_string())
        return fail(item.source(), joinKey(prefix, key) + ": expected strings, found " + typeName(item.type()));
      out.push_back(item.as_string()->get());
    }
  }

  void readUnsignedArray(const toml::node& node, std::string_view prefix, std::string_view key,
                         std::vector<uint64_t>& out, size_t max_items) {
    if (!node.is_array()) return wrongType(node, prefix, key, "an array of integers");
    const toml::array& array = *node.as_array();
    if (array.size() > max_items)
      return fail(node.source(), joinKey(prefix, key) + ": more than " + std::to_string(max_items) + " entries");
    out.clear();
    for (const toml::node& item : array) {
      auto value = unsignedValue(item, prefix, key);
      if (!value) return;
      out.push_back(*value);
    }
  }

 private:
  void wrongType(const toml::node& node, std::string_view prefix, std::string_view key, const char* expected) {
    fail(node.source(), joinKey(prefix, key) + ": expected " + expected + ", found " + typeName(node.type()));
  }

  std::optional<uint64_t> unsignedValue(const toml::node& node, std::string_view prefix, std::string_view key) {
    if (!node.is_integer()) {
      wrongType(node, prefix, key, "an integer");
      return std::nullopt;
    }
    int64_t value = node.as_integer()->get();
    if (value < 0) {
      fail(node.source(), joinKey(prefix, key) + ": must not be negative");
      return std::nullopt;
    }
    return static_cast<uint64_t>(value);
  }

  std::string source_;
  std::optional<std::string> error_;
};

void readTopology(ProfileReader& reader, const toml::table& table, NodeProfile& profile) {
  reader.checkKeys(table, "topology", {"packages", "cores_per_package", "threads_per_core"});
  reader.readUnsigned(table, "topology", "packages", profile.packages);
  reader.readUnsigned(table, "topology", "cores_per_package", profile.cores_per_package);
  reader.readUnsigned(table, "topology", "threads_per_core", profile.threads_per_core, false);
}

void readCpufreq(ProfileReader& reader, const toml::table& table, NodeProfile& profile) {
  reader.checkKeys(table, "cpufreq",
                   {"driver", "frequencies_khz", "min_khz", "max_khz", "step_khz", "governors", "default_governor",
                    "transition_latency_ns"});
  reader.readString(table, "cpufreq", "driver", profile.driver);
  reader.readStringArray(table, "cpufreq", "governors", profile.governors, kMaxGovernors);
  reader.readString(table, "cpufreq", "default_governor", profile.default_governor);
  reader.readUnsigned(table, "cpufreq", "transition_latency_ns", profile.transition_latency_ns, false);

  const toml::node* list = table.get("frequencies_khz");
  bool has_range = table.contains("min_khz") || table.contains("max_khz") || table.contains("step_khz");
  if (list && has_range) {
    return reader.fail(list->source(),
                       "cpufreq: give either frequencies_khz or min_khz/max_khz/step_khz, not both");
  }
  if (list) return reader.readUnsignedArray(*list, "cpufreq", "frequencies_khz", profile.frequencies_khz,
                                            kMaxFrequencies);
  if (!has_range) return reader.fail(table.source(), "cpufreq: missing frequencies_khz (or min_khz/max_khz/step_khz)");

  uint64_t min_khz = 0, max_khz = 0, step_khz = 0;
  reader.readUnsigned(table, "cpufreq", "min_khz", min_khz);
  reader.readUnsigned(table, "cpufreq", "max_khz", max_khz);
  reader.readUnsigned(table, "cpufreq", "step_khz", step_khz);
  if (reader.failed()) return;
  const toml::source_region& where = table.get("min_khz")->source();
  if (min_khz == 0 || max_khz > kMaxFrequencyKhz)
    return reader.fail(where, "cpufreq: min_khz and max_khz must be in 1.." + std::to_string(kMaxFrequencyKhz));
  if (max_khz < min_khz) return reader.fail(where, "cpufreq: max_khz must not be below min_khz");
  if (step_khz == 0) return reader.fail(table.get("step_khz")->source(), "cpufreq: step_khz must be positive");
  if ((max_khz - min_khz) % step_khz != 0)
    return reader.fail(table.get("step_khz")->source(), "cpufreq: max_khz - min_khz must be a multiple of step_khz");
  // Checked before generating, so a tiny step cannot make a huge table.
  if ((max_khz - min_khz) / step_khz + 1 > kMaxFrequencies)
    return reader.fail(table.get("step_khz")->source(),
                       "cpufreq: the range gives more than " + std::to_string(kMaxFrequencies) + " frequencies");
  profile.frequencies_khz.clear();
  for (uint64_t khz = min_khz; khz <= max_khz; khz += step_khz) profile.frequencies_khz.push_back(khz);
}

void readPower(ProfileReader& reader, const toml::table& table, NodeProfile& profile) {
  reader.checkKeys(table, "power",
                   {"voltage_min_v", "voltage_max_v", "capacitance_nf", "leakage_current_ma",
                    "leakage_current_ma_per_c", "leakage_ref_c", "uncore_power_w", "idle_utilisation"});
  reader.readDouble(table, "power", "voltage_min_v", 1, profile.voltage_min_v);
  reader.readDouble(table, "power", "voltage_max_v", 1, profile.voltage_max_v);
  reader.readDouble(table, "power", "capacitance_nf", 1e-9, profile.capacitance_f);
  reader.readDouble(table, "power", "leakage_current_ma", 1e-3, profile.leakage_current_a);
  reader.readDouble(table, "power", "leakage_current_ma_per_c", 1e-3, profile.leakage_current_a_per_c);
  reader.readDouble(table, "power", "leakage_ref_c", 1, profile.leakage_ref_c);
  reader.readDouble(table, "power", "uncore_power_w", 1, profile.uncore_power_w);
  reader.readDouble(table, "power", "idle_utilisation", 1, profile.idle_utilisation, false);
}

void readThermal(ProfileReader& reader, const toml::table& table, NodeProfile& profile) {
  reader.checkKeys(table, "thermal",
                   {"ambient_c", "core_heat_capacity_j_per_k", "core_to_heatsink_k_per_w", "core_to_neighbour_k_per_w",
                    "heatsink_heat_capacity_j_per_k", "heatsink_to_ambient_k_per_w", "tjmax_c"});
  reader.readDouble(table, "thermal", "ambient_c", 1, profile.ambient_c);
  reader.readDouble(table, "thermal", "core_heat_capacity_j_per_k", 1, profile.core_heat_capacity_j_per_k);
  reader.readDouble(table, "thermal", "core_to_heatsink_k_per_w", 1, profile.core_to_heatsink_k_per_w);
  reader.readDouble(table, "thermal", "core_to_neighbour_k_per_w", 1, profile.core_to_neighbour_k_per_w);
  reader.readDouble(table, "thermal", "heatsink_heat_capacity_j_per_k", 1, profile.heatsink_heat_capacity_j_per_k);
  reader.readDouble(table, "thermal", "heatsink_to_ambient_k_per_w", 1, profile.heatsink_to_ambient_k_per_w);
  reader.readDouble(table, "thermal", "tjmax_c", 1, profile.tjmax_c);
}

void readRapl(ProfileReader& reader, const toml::table& table, NodeProfile& profile) {
  reader.checkKeys(table, "rapl", {"max_energy_range_uj", "default_limit_w"});
  reader.readUnsigned(table, "rapl", "max_energy_range_uj", profile.rapl_max_energy_range_uj);
  reader.readDouble(table, "rapl", "default_limit_w", 1, profile.rapl_default_limit_w);
}

Result<NodeProfile> parseDocument(const toml::table& root, std::string_view source_name) {
  ProfileReader reader(source_name);
  NodeProfile profile;
  reader.checkKeys(root, "", {"name", "cpu_model", "topology", "cpufreq", "power", "thermal", "rapl"});
  reader.readString(root, "", "name", profile.name);
  reader.readString(root, "", "cpu_model", profile.cpu_model);
  if (const toml::table* t = reader.section(root, "topology")) readTopology(reader, *t, profile);
  if (const toml::table* t = reader.section(root, "cpufreq")) readCpufreq(reader, *t, profile);
  if (const toml::table* t = reader.section(root, "power")) readPower(reader, *t, profile);
  if (const toml::table* t = reader.section(root, "thermal")) readThermal(reader, *t, profile);
  if (const toml::table* t = reader.section(root, "rapl")) readRapl(reader, *t, profile);
  if (reader.failed()) return invalidArgument(reader.error());
  Status valid = profile.validate();
  if (!valid) return invalidArgument(std::string(source_name) + ": " + valid.error().message);
  return profile;
}

bool isPlainName(std::string_view name) {
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

bool hasControlCharacters(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// Range check that also rejects NaN (every comparison with NaN is false).
bool within(double value, double low, double high) { return value >= low && value <= high; }

}  // namespace

Result<NodeProfile> NodeProfile::parse(std::string_view toml_text, std::string_view source_name) {
  // toml++ is built with exceptions; none may leave this function.
  try {
    toml::table root = toml::parse(toml_text, source_name);
    return parseDocument(root, source_name);
  } catch (const toml::parse_error& error) {
    const toml::source_position& at = error.source().begin;
    std::string where = std::string(source_name);
    if (at.line > 0) where += ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
    return invalidArgument(where + ": " + std::string(error.description()));
  } catch (const std::exception& error) {
    return invalidArgument(std::string(source_name) + ": " + error.what());
  } catch (...) {
    return internalError(std::string(source_name) + ": unexpected error while parsing");
  }
}

Result<NodeProfile> NodeProfile::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return notFound("cannot open profile " + path.string() + ": " + std::strerror(errno));
  // A profile is a few kilobytes; refuse to slurp a mistaken multi-gigabyte path.
  constexpr std::streamsize kMaxBytes = 1 << 20;
  std::string text(static_cast<size_t>(kMaxBytes) + 1, '\0');
  in.read(text.data(), kMaxBytes + 1);
  if (in.bad()) return unavailable("cannot read profile " + path.string());
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kMaxBytes))
    return invalidArgument("profile " + path.string() + " is larger than 1 MiB");
  return parse(text, path.string());
}

NodeProfile NodeProfile::xeonE5_2630() {
  // Keep in step with profiles/xeon-e5-2630.toml, which says where each
  // number comes from; a unit test checks that the two agree. Scale factors
  // are written as parse() applies them so that the doubles compare equal.
  NodeProfile p;
  p.name = "xeon-e5-2630";
  p.cpu_model = "Intel(R) Xeon(R) CPU E5-2630 0 @ 2.30GHz";
  p.packages = 2;
  p.cores_per_package = 6;
  p.threads_per_core = 1;
  p.driver = "acpi-cpufreq";
  p.frequencies_khz.clear();
  for (uint64_t khz = 1200000; khz <= 2600000; khz += 100000) p.frequencies_khz.push_back(khz);
  p.governors = {"conservative", "ondemand", "userspace", "powersave", "performance", "schedutil"};
  p.default_governor = "ondemand";
  p.transition_latency_ns = 10000;
  p.voltage_min_v = 0.98;
  p.voltage_max_v = 1.35;
  p.capacitance_f = 2.2 * 1e-9;
  p.leakage_current_a = 1500 * 1e-3;
  p.leakage_current_a_per_c = 25 * 1e-3;
  p.leakage_ref_c = 50;
  p.uncore_power_w = 12;
  p.idle_utilisation = 0.02;
  p.ambient_c = 25;
  p.core_heat_capacity_j_per_k = 0.65;
  p.core_to_heatsink_k_per_w = 1.5;
  p.core_to_neighbour_k_per_w = 4;
  p.heatsink_heat_capacity_j_per_k = 100;
  p.heatsink_to_ambient_k_per_w = 0.3;
  p.tjmax_c = 100;
  p.rapl_max_energy_range_uj = 65532610987ULL;
  p.rapl_default_limit_w = 95;
  return p;
}

std::string NodeProfile::hwlocSynthetic() const {
  return "package:" + std::to_string(packages) + " core:" + std::to_string(cores_per_package) +
         " pu:" + std::to_string(threads_per_core);
}

Status NodeProfile::validate() const {
  if (name.empty() || name.size() > 64 || !isPlainName(name))
    return invalidArgument("name must be 1 to 64 characters of letters, digits, '-', '_' or '.'");
  if (cpu_model.size() > 128 || hasControlCharacters(cpu_model))
    return invalidArgument("cpu_model must be at most 128 characters without control characters");

  if (packages < 1 || packages > 64) return invalidArgument("topology.packages must be in 1..64");
  if (cores_per_package < 1 || cores_per_package > 256)
    return invalidArgument("topology.cores_per_package must be in 1..256");
  if (threads_per_core < 1 || threads_per_core > 8) return invalidArgument("topology.threads_per_core must be in 1..8");

  bool intel_pstate = driver == "intel_pstate";
  if (driver != "acpi-cpufreq" && !intel_pstate)
    return invalidArgument("cpufreq.driver must be acpi-cpufreq or intel_pstate, not '" + driver + "'");
  if (frequencies_khz.empty()) return invalidArgument("cpufreq.frequencies_khz must not be empty");
  if (frequencies_khz.size() > kMaxFrequencies)
    return invalidArgument("cpufreq.frequencies_khz has more than " + std::to_string(kMaxFrequencies) + " entries");
  for (size_t i = 0; i < frequencies_khz.size(); ++i) {
    if (frequencies_khz[i] == 0 || frequencies_khz[i] > kMaxFrequencyKhz)
      return invalidArgument("cpufreq.frequencies_khz must be in 1.." + std::to_string(kMaxFrequencyKhz) + " kHz");
    if (i > 0 && frequencies_khz[i] <= frequencies_khz[i - 1])
      return invalidArgument("cpufreq.frequencies_khz must be strictly ascending");
  }
  if (governors.empty()) return invalidArgument("cpufreq.governors must not be empty");
  for (size_t i = 0; i < governors.size(); ++i) {
    const std::string& governor = governors[i];
    if (!contains(kKnownGovernors, governor))
      return invalidArgument("cpufreq.governors: unknown governor '" + governor + "'");
    if (intel_pstate && !contains(kIntelPstateGovernors, governor))
      return invalidArgument("cpufreq.governors: intel_pstate (active) offers only performance and powersave, not '" +
                             governor + "'");
    if (std::find(governors.begin(), governors.begin() + static_cast<std::ptrdiff_t>(i), governor) !=
        governors.begin() + static_cast<std::ptrdiff_t>(i))
      return invalidArgument("cpufreq.governors: '" + governor + "' is listed twice");
  }
  if (std::find(governors.begin(), governors.end(), default_governor) == governors.end())
    return invalidArgument("cpufreq.default_governor '" + default_governor + "' is not in cpufreq.governors");
  if (transition_latency_ns > 100'000'000) return invalidArgument("cpufreq.transition_latency_ns must be at most 0.1 s");

  if (!within(voltage_min_v, 0.5, 2.0)) return invalidArgument("power.voltage_min_v must be in 0.5..2.0 V");
  if (!within(voltage_max_v, 0.5, 2.0)) return invalidArgument("power.voltage_max_v must be in 0.5..2.0 V");
  if (voltage_min_v > voltage_max_v) return invalidArgument("power.voltage_min_v must not exceed power.voltage_max_v");
  if (!within(capacitance_f, 1e-12, 1e-6)) return invalidArgument("power.capacitance_nf must be in 0.001..1000 nF");
  if (!within(leakage_current_a, 0, 100)) return invalidArgument("power.leakage_current_ma must be in 0..100000 mA");
  if (!within(leakage_current_a_per_c, 0, 10))
    return invalidArgument("power.leakage_current_ma_per_c must be in 0..10000 mA/C");
  if (!within(leakage_ref_c, -50, 150)) return invalidArgument("power.leakage_ref_c must be in -50..150 C");
  if (!within(uncore_power_w, 0, 1000)) return invalidArgument("power.uncore_power_w must be in 0..1000 W");
  if (!within(idle_utilisation, 0, 1)) return invalidArgument("power.idle_utilisation must be in 0..1");

  if (!within(ambient_c, -50, 100)) return invalidArgument("thermal.ambient_c must be in -50..100 C");
  // The lower bounds keep the model's stable sub-step (a fraction of the
  // smallest RC product) from becoming absurdly small.
  if (!within(core_heat_capacity_j_per_k, 1e-3, 1e3))
    return invalidArgument("thermal.core_heat_capacity_j_per_k must be in 0.001..1000 J/K");
  if (!within(heatsink_heat_capacity_j_per_k, 1e-2, 1e6))
    return invalidArgument("thermal.heatsink_heat_capacity_j_per_k must be in 0.01..1e6 J/K");
  if (!within(core_to_heatsink_k_per_w, 1e-2, 1e3))
    return invalidArgument("thermal.core_to_heatsink_k_per_w must be in 0.01..1000 K/W");
  if (!within(core_to_neighbour_k_per_w, 1e-2, 1e4))
    return invalidArgument("thermal.core_to_neighbour_k_per_w must be in 0.01..10000 K/W");
  if (!within(heatsink_to_ambient_k_per_w, 1e-3, 1e3))
    return invalidArgument("thermal.heatsink_to_ambient_k_per_w must be in 0.001..1000 K/W");
  if (!within(tjmax_c, ambient_c + 1, 150)) return invalidArgument("thermal.tjmax_c must be above ambient_c and <= 150 C");
  // Leakage grows linearly with temperature; if one more kelvin adds more
  // heat than the path to ambient removes, the temperature runs away and
  // the model has no steady state.
  double loop_gain = voltage_max_v * leakage_current_a_per_c *
                     (core_to_heatsink_k_per_w + cores_per_package * heatsink_to_ambient_k_per_w);
  if (loop_gain >= 0.9)
    return invalidArgument("power.leakage_current_ma_per_c is too large for the thermal resistances (thermal runaway)");

  if (rapl_max_energy_range_uj == 0) return invalidArgument("rapl.max_energy_range_uj must be positive");
  if (!within(rapl_default_limit_w, 1e-3, 1e5)) return invalidArgument("rapl.default_limit_w must be in 0.001..100000 W");
  return {};
}

}  // namespace nk
