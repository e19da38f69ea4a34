#include "cli/status_formatter.h"

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/table.h"
#include "cli/value_formatter.h"
#include "base/units.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;
using Json = nlohmann::ordered_json;

// nlohmann writes NaN as null too, but only when dumping; being explicit
// keeps the object itself right for anyone who inspects it before that.
Json numberOrNull(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

std::map<uint32_t, const pb::Core*> coresById(const pb::Topology& topology) {
  std::map<uint32_t, const pb::Core*> cores;
  for (const auto& core : topology.cores()) cores[core.id()] = &core;
  return cores;
}

std::string plural(uint64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string cpuList(const google::protobuf::RepeatedField<uint32_t>& cpus) {
  if (cpus.empty()) return "-";
  return formatCpuList(std::vector<uint32_t>(cpus.begin(), cpus.end()));
}

}  // namespace

std::string StatusFormatter::text(const pb::Topology& topology, const pb::TelemetrySnapshot& snapshot) {
  std::string out;
  Table header({{""}, {""}});
  header.addRow({"Host", topology.hostname().empty() ? "-" : topology.hostname()});
  header.addRow({"CPU", topology.cpu_model().empty() ? "-" : topology.cpu_model()});
  header.addRow({"Node", topology.emulated()
                             ? "emulated (profile " + (topology.profile().empty() ? "default" : topology.profile()) + ")"
                             : "real hardware"});
  header.addRow({"Topology", plural(topology.packages(), "package") + ", " +
                                 plural(static_cast<uint64_t>(topology.cores_size()), "core") + ", " +
                                 plural(topology.pus(), "PU") + ", " + plural(topology.numa_nodes(), "NUMA node")});
  header.addRow({"Sampled", ValueFormatter::timestamp(snapshot.timestamp_ns())});
  out += header.render("", false);

  auto topology_cores = coresById(topology);
  Table cores({{"CORE", Table::Align::kRight},
               {"PKG", Table::Align::kRight},
               {"CPUS"},
               {"FREQ", Table::Align::kRight},
               {"MIN-MAX", Table::Align::kRight},
               {"GOVERNOR"},
               {"TEMP", Table::Align::kRight},
               {"UTIL", Table::Align::kRight}});
  for (const auto& core : snapshot.cores()) {
    auto it = topology_cores.find(core.id());
    cores.addRow({std::to_string(core.id()), std::to_string(core.package()),
                  it == topology_cores.end() ? "-" : cpuList(it->second->cpus()),
                  ValueFormatter::frequency(core.cur_khz()),
                  ValueFormatter::frequencyRange(core.min_khz(), core.max_khz()),
                  core.governor().empty() ? "-" : core.governor(), ValueFormatter::temperature(core.temperature_c()),
                  ValueFormatter::utilisation(core.utilisation())});
  }
  out += "\n" + cores.render();

  Table packages({{"PACKAGE", Table::Align::kRight},
                  {"POWER", Table::Align::kRight},
                  {"ENERGY", Table::Align::kRight},
                  {"POWER CAP", Table::Align::kRight},
                  {"TEMP", Table::Align::kRight}});
  for (const auto& package : snapshot.packages()) {
    packages.addRow({std::to_string(package.id()), ValueFormatter::power(package.power_w()),
                     ValueFormatter::energy(package.energy_j()),
                     ValueFormatter::powerLimit(package.power_limit_w(), package.power_limit_enabled()),
                     ValueFormatter::temperature(package.temperature_c())});
  }
  out += "\n" + packages.render();

  out += "\nNode power  " + ValueFormatter::power(snapshot.node_power_w()) + "\n";
  for (const auto& warning : snapshot.warnings()) out += "warning: " + warning + "\n";
  return out;
}

std::string StatusFormatter::json(const pb::Topology& topology, const pb::TelemetrySnapshot& snapshot, bool pretty) {
  auto topology_cores = coresById(topology);

  Json packages = Json::array();
  for (const auto& package : snapshot.packages()) {
    packages.push_back({
        {"id", package.id()},
        {"power_w", numberOrNull(package.power_w())},
        {"energy_j", numberOrNull(package.energy_j())},
        {"power_limit_w", numberOrNull(package.power_limit_w())},
        {"power_limit_enabled", package.power_limit_enabled()},
        {"temperature_c", numberOrNull(package.temperature_c())},
    });
  }

  Json cores = Json::array();
  for (const auto& core : snapshot.cores()) {
    auto it = topology_cores.find(core.id());
    Json cpus = Json::array();
    if (it != topology_cores.end())
      for (uint32_t cpu : it->second->cpus()) cpus.push_back(cpu);
    cores.push_back({
        {"id", core.id()},
        {"package", core.package()},
        {"core_id", it == topology_cores.end() ? Json(nullptr) : Json(it->second->core_id())},
        {"cpus", cpus},
        {"frequency_khz", core.cur_khz()},
        {"min_khz", core.min_khz()},
        {"max_khz", core.max_khz()},
        {"governor", core.governor()},
        {"temperature_c", numberOrNull(core.temperature_c())},
        {"utilisation", numberOrNull(core.utilisation())},
    });
  }

  Json warnings = Json::array();
  for (const auto& warning : snapshot.warnings()) warnings.push_back(warning);

  Json object = {
      {"hostname", topology.hostname()},
      {"cpu_model", topology.cpu_model()},
      {"emulated", topology.emulated()},
      {"profile", topology.profile()},
      {"package_count", topology.packages()},
      {"core_count", topology.cores_size()},
      {"pu_count", topology.pus()},
      {"numa_nodes", topology.numa_nodes()},
      {"packages", packages},
      {"cores", cores},
      {"node_power_w", numberOrNull(snapshot.node_power_w())},
      {"node_energy_j", numberOrNull(snapshot.node_energy_j())},
      {"timestamp_ns", snapshot.timestamp_ns()},
      {"warnings", warnings},
  };
  // Replace invalid UTF-8 from a hostname or model string instead of throwing.
  return object.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace nk::cli
