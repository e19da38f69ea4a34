#include "daemon_config.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace nk {

namespace {

std::string where(std::string_view source, const toml::source_region& region) {
  return std::string(source) + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

// The value in quotes, bytes that would not print as \xNN.
std::string quoted(std::string_view value) {
  std::string out = "'";
  for (unsigned char c : value) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out + "'";
}

bool isAlnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// RFC 1123: dot-separated labels of letters, digits and '-', 1 to 63 bytes
// each, not starting or ending with '-'; 253 bytes at most.
bool isHostName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = host.find('.', start);
    std::string_view label = host.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
    for (char c : label)
      if (!isAlnum(c) && c != '-') return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

Status checkNodeName(std::string_view name) {
  const std::string expected = "; a node name is 1 to 63 characters of A-Z, a-z, 0-9, '.', '_' and '-'";
  if (name.empty()) return invalidArgument("must not be empty" + expected);
  if (name.size() > 63)
    return invalidArgument(quoted(name) + " is " + std::to_string(name.size()) + " bytes long" + expected);
  for (char c : name) {
    if (!isAlnum(c) && c != '.' && c != '_' && c != '-')
      return invalidArgument(quoted(name) + " contains " + (c == ' ' ? std::string("a space") : quoted({&c, 1})) +
                             expected);
  }
  return {};
}

Status checkListenAddress(std::string_view address) {
  const std::string expected =
      "; expected HOST:PORT, HOST an IPv4 address, an [IPv6] address in brackets or a host name and PORT 1 to "
      "65535, e.g. 10.1.0.7:7400, [fd00::7]:7400 or node007:7400";
  auto wrong = [&](const std::string& what) { return invalidArgument(quoted(address) + ": " + what + expected); };
  std::string_view host, port;
  bool bracketed = false;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close == std::string_view::npos) return wrong("no ']' closes the IPv6 address");
    host = address.substr(1, close - 1);
    bracketed = true;
    if (close + 1 == address.size()) return wrong("no port");
    if (address[close + 1] != ':') return wrong("':' must follow the ']'");
    port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string_view::npos) return wrong("no port");
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return wrong("an IPv6 address must be in brackets, as in [::1]:7400");
  }
  if (host.empty()) return wrong("no host (0.0.0.0 or [::] listen on every interface)");
  std::string host_text(host);
  unsigned char binary[16];
  if (bracketed) {
    if (inet_pton(AF_INET6, host_text.c_str(), binary) != 1) return wrong(quoted(host) + " is not an IPv6 address");
  } else if (host.find_first_not_of("0123456789.") == std::string_view::npos) {
    if (inet_pton(AF_INET, host_text.c_str(), binary) != 1)
      return wrong(quoted(host) + " is not an IPv4 address (four numbers 0 to 255 joined by dots)");
  } else if (!isHostName(host)) {
    return wrong(quoted(host) +
                 " is not a host name (labels of letters, digits and '-', up to 63 bytes each, joined by dots)");
  }
  if (port.empty()) return wrong("no port");
  uint32_t number = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && ptr == port.data() + port.size() && number > 65535))
    return wrong("port " + std::string(port) + " is above 65535");
  if (ec != std::errc() || ptr != port.data() + port.size()) return wrong("port " + quoted(port) + " is not a number");
  if (number == 0) return wrong("port 0 is not allowed: peers must know the port");
  return {};
}

Result<uint64_t> parseRecordingQuota(std::string_view text) {
  constexpr uint64_t kMin = 1ull << 20, kMax = 1ull << 50;
  const std::string expected =
      "; expected a size from 1 MiB to 1024 TiB: a number of bytes, or with K, M, G, T (or KiB, MiB, GiB, TiB), "
      "e.g. 2GiB or 512M";
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec == std::errc::result_out_of_range) return invalidArgument(quoted(text) + " is too large" + expected);
  if (ec != std::errc() || end == text.data()) return invalidArgument(quoted(text) + " is not a size" + expected);
  std::string_view unit = text.substr(static_cast<size_t>(end - text.data()));
  if (unit.starts_with(' ')) unit.remove_prefix(1);
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K" || unit == "KiB") shift = 10;
  else if (unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "GiB") shift = 30;
  else if (unit == "T" || unit == "TiB") shift = 40;
  if (shift < 0) return invalidArgument(quoted(text) + ": unknown unit " + quoted(unit) + expected);
  if (number > (kMax >> shift)) return invalidArgument(quoted(text) + " is too large" + expected);
  uint64_t bytes = number << shift;
  if (bytes < kMin) return invalidArgument(quoted(text) + " is too small" + expected);
  return bytes;
}

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
    // A shared check's complaint, with the place and the key in front.
    auto checked = [&](Status check) -> Status {
      if (check) return {};
      return invalidArgument(at + ": " + name + " " + check.error().message);
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
    } else if (name == "emulate_ignore_host_load") {
      if (!node.is_boolean()) status = invalidArgument(at + ": 'emulate_ignore_host_load' must be true or false");
      else config.emulate_ignore_host_load = *node.value<bool>();
    } else if (name == "telemetry_interval_ms") {
      status = needInteger(config.telemetry_interval_ms, 10, 60000);
    } else if (name == "debug_grace_s") {
      status = needInteger(config.debug_grace_s, 1, 86400);
    } else if (name == "dct_interval_ms") {
      status = needInteger(config.dct_interval_ms, 20, 60000);
    } else if (name == "dvfs_per_dct") {
      status = needInteger(config.dvfs_per_dct, 1, 100);
    } else if (name == "node_name") {
      status = needString(config.node_name);
      if (status) status = checked(checkNodeName(*config.node_name));
    } else if (name == "listen") {
      status = needString(config.listen);
      if (status) status = checked(checkListenAddress(*config.listen));
    } else if (name == "peer_token") {
      status = needString(config.peer_token);
    } else if (name == "fault_rules") {
      status = needString(config.fault_rules);
    } else if (name == "fault_tree_fan_out") {
      status = needInteger(config.fault_tree_fan_out, 1, 64);
    } else if (name == "tree_heartbeat_ms") {
      status = needInteger(config.tree_heartbeat_ms, 10, 60000);
    } else if (name == "tree_heartbeat_misses") {
      status = needInteger(config.tree_heartbeat_misses, 1, 100);
    } else if (name == "recording_quota_per_user" || name == "recording_quota_total") {
      auto& field = name == "recording_quota_per_user" ? config.recording_quota_per_user : config.recording_quota_total;
      Result<uint64_t> bytes = invalidArgument("must be a size such as \"2GiB\" or a number of bytes");
      if (const auto* integer = node.as_integer()) bytes = parseRecordingQuota(std::to_string(integer->get()));
      else if (const auto* text = node.as_string()) bytes = parseRecordingQuota(text->get());
      if (bytes) field = *bytes;
      else status = invalidArgument(at + ": " + name + " " + bytes.error().message);
    } else if (name == "recording_max_age_days") {
      status = needInteger(config.recording_max_age_days, 1, 3650);
    } else if (name == "peer_cert") {
      status = needString(config.peer_cert);
    } else if (name == "peer_key") {
      status = needString(config.peer_key);
    } else if (name == "peer_ca") {
      status = needString(config.peer_ca);
    } else if (name == "connections_per_user") {
      status = needInteger(config.connections_per_user, 1, 65536);
    } else if (name == "connections_total") {
      status = needInteger(config.connections_total, 1, 1048576);
    } else if (name == "streams_per_user") {
      status = needInteger(config.streams_per_user, 1, 1048576);
    } else if (name == "streams_total") {
      status = needInteger(config.streams_total, 1, 1048576);
    } else if (name == "stream_messages_per_second") {
      status = needInteger(config.stream_messages_per_second, 1, 10000000);
    } else if (name == "max_message_bytes") {
      status = needInteger(config.max_message_bytes, 4096, 1073741824);
    } else if (name == "task_graph_tasks") {
      status = needInteger(config.task_graph_tasks, 0, 1000000000);
    } else if (name == "metrics_port") {
      status = needInteger(config.metrics_port, 0, 65535);
    } else {
      status = invalidArgument(at + ": unknown key '" + name +
                               "' (known: socket, state_dir, emulate, emulate_ignore_host_load, profile, sysfs_root, log_level, "
                               "telemetry_interval_ms, admin_group, dct_interval_ms, dvfs_per_dct, debug_grace_s, "
                               "node_name, listen, peer_token, fault_rules, fault_tree_fan_out, tree_heartbeat_ms, "
                               "tree_heartbeat_misses, recording_quota_per_user, recording_quota_total, "
                               "recording_max_age_days, peer_cert, peer_key, peer_ca, connections_per_user, connections_total, streams_per_user, streams_total, "
                               "stream_messages_per_second, max_message_bytes, task_graph_tasks, metrics_port)");
    }
    if (!status) return status.error();
  }
  return config;
}

Result<DaemonConfig> DaemonConfig::load(const std::filesystem::path& path) {
  // A directory opens and reads as empty: it would pass for a config file
  // that sets nothing.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return invalidArgument(path.string() + " is a directory, not a config file (give the .toml file itself)");
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
  take(emulate_ignore_host_load, over.emulate_ignore_host_load);
  take(profile, over.profile);
  take(sysfs_root, over.sysfs_root);
  take(log_level, over.log_level);
  take(telemetry_interval_ms, over.telemetry_interval_ms);
  take(admin_group, over.admin_group);
  take(dct_interval_ms, over.dct_interval_ms);
  take(debug_grace_s, over.debug_grace_s);
  take(dvfs_per_dct, over.dvfs_per_dct);
  take(node_name, over.node_name);
  take(listen, over.listen);
  take(peer_token, over.peer_token);
  take(fault_rules, over.fault_rules);
  take(fault_tree_fan_out, over.fault_tree_fan_out);
  take(tree_heartbeat_ms, over.tree_heartbeat_ms);
  take(tree_heartbeat_misses, over.tree_heartbeat_misses);
  take(recording_quota_per_user, over.recording_quota_per_user);
  take(recording_quota_total, over.recording_quota_total);
  take(recording_max_age_days, over.recording_max_age_days);
  take(peer_cert, over.peer_cert);
  take(peer_key, over.peer_key);
  take(peer_ca, over.peer_ca);
  take(connections_per_user, over.connections_per_user);
  take(connections_total, over.connections_total);
  take(streams_per_user, over.streams_per_user);
  take(streams_total, over.streams_total);
  take(stream_messages_per_second, over.stream_messages_per_second);
  take(max_message_bytes, over.max_message_bytes);
  take(task_graph_tasks, over.task_graph_tasks);
  take(metrics_port, over.metrics_port);
}

}  // namespace nk
