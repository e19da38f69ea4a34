#include "daemon_config.h"

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace nk {

namespace {

std::string where(std::string_view source, const toml::source_region& region) {
  return std::string(source) + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

}  // namespace

Result<DaemonConfig> DaemonConfig::parse(std::string_view text, std::string_view source) {
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& error) {
    return invalidArgument(where(source, error.source()) + ": " + std::string(error.description()));
  }
  DaemonConfig config;
  for (const auto& entry : table) {
    // Named, not a structured binding: clang 14 (the fuzzer build) cannot
    // capture those in lambdas.
    const toml::node& node = entry.second;
    std::string name(entry.first.str());
    std::string at = where(source, node.source());
    auto needString = [&](std::optional<std::string>& field) -> Status {
      if (!node.is_string()) return invalidArgument(at + ": '" + name + "' must be a string");
      field = *node.value<std::string>();
      if (field->empty()) return invalidArgument(at + ": '" + name + "' must not be empty");
      return {};
    };
    // as_integer, not value<int64_t>: the latter converts floats, with
    // undefined behaviour for huge ones (found by the fuzzer).
    auto needInteger = [&](std::optional<uint32_t>& field, int64_t low, int64_t high) -> Status {
      const auto* integer = node.as_integer();
      if (!integer) return invalidArgument(at + ": '" + name + "' must be an integer");
      if (integer->get() < low || integer->get() > high)
        return invalidArgument(at + ": " + name + " must be between " + std::to_string(low) + " and " +
                               std::to_string(high) + ", not " + std::to_string(integer->get()));
      field = static_cast<uint32_t>(integer->get());
      return {};
    };
    Status status;
    if (name == "socket") status = needString(config.socket);
    else if (name == "state_dir") status = needString(config.state_dir);
    else if (name == "profile") status = needString(config.profile);
    else if (name == "sysfs_root") status = needString(config.sysfs_root);
    else if (name == "admin_group") status = needString(config.admin_group);
    else if (name == "log_level") {
      status = needString(config.log_level);
      if (status && *config.log_level != "error" && *config.log_level != "warning" && *config.log_level != "info" &&
          *config.log_level != "debug")
        status = invalidArgument(at + ": log_level must be error, warning, info or debug, not '" + *config.log_level + "'");
    } else if (name == "emulate") {
      if (!node.is_boolean()) status = invalidArgument(at + ": 'emulate' must be true or false");
      else config.emulate = *node.value<bool>();
    } else if (name == "telemetry_interval_ms") {
      status = needInteger(config.telemetry_interval_ms, 10, 60000);
    } else if (name == "debug_grace_s") {
      status = needInteger(config.debug_grace_s, 1, 86400);
    } else if (name == "dct_interval_ms") {
      status = needInteger(config.dct_interval_ms, 20, 60000);
    } else if (name == "dvfs_per_dct") {
      status = needInteger(config.dvfs_per_dct, 1, 100);
    } else {
      status = invalidArgument(at + ": unknown key '" + name +
                               "' (known: socket, state_dir, emulate, profile, sysfs_root, log_level, "
                               "telemetry_interval_ms, admin_group, dct_interval_ms, dvfs_per_dct, debug_grace_s)");
    }
    if (!status) return status.error();
  }
  return config;
}

Result<DaemonConfig> DaemonConfig::load(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return notFound(path.string() + ": cannot open config file");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return unavailable(path.string() + ": read error");
  return parse(text.str(), path.string());
}

void DaemonConfig::overlay(const DaemonConfig& over) {
  auto take = [](auto& mine, const auto& theirs) {
    if (theirs) mine = theirs;
  };
  take(socket, over.socket);
  take(state_dir, over.state_dir);
  take(emulate, over.emulate);
  take(profile, over.profile);
  take(sysfs_root, over.sysfs_root);
  take(log_level, over.log_level);
  take(telemetry_interval_ms, over.telemetry_interval_ms);
  take(admin_group, over.admin_group);
  take(dct_interval_ms, over.dct_interval_ms);
  take(debug_grace_s, over.debug_grace_s);
  take(dvfs_per_dct, over.dvfs_per_dct);
}

}  // namespace nk
