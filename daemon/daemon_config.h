#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace nk {

// Settings from the config file (SYSCONFDIR/nodekeeper/nodekeeperd.toml, or --config). Every field
// is optional: what is absent keeps its default or the command line's value.
struct DaemonConfig {
  std::optional<std::string> socket;
  std::optional<std::string> state_dir;
  std::optional<bool> emulate;
  std::optional<bool> emulate_ignore_host_load;
  std::optional<std::string> profile;
  std::optional<std::string> sysfs_root;
  std::optional<std::string> log_level;
  std::optional<uint32_t> telemetry_interval_ms;
  std::optional<std::string> admin_group;
  std::optional<uint32_t> dct_interval_ms;
  std::optional<uint32_t> debug_grace_s;
  std::optional<uint32_t> dvfs_per_dct;
  // Fault localisation tree.
  std::optional<std::string> node_name;
  std::optional<std::string> listen;
  std::optional<std::string> peer_token;
  std::optional<std::string> fault_rules;
  std::optional<uint32_t> fault_tree_fan_out;
  std::optional<uint32_t> tree_heartbeat_ms;
  std::optional<uint32_t> tree_heartbeat_misses;
  // Task recordings under STATE_DIR/recordings: sizes in bytes.
  std::optional<uint64_t> recording_quota_per_user;
  std::optional<uint64_t> recording_quota_total;
  std::optional<uint32_t> recording_max_age_days;
  // Mutual TLS between peer daemons: this node's certificate and key, and
  // the CA its peers' certificates must chain to (all three, or none).
  std::optional<std::string> peer_cert;
  std::optional<std::string> peer_key;
  std::optional<std::string> peer_ca;
  // Unix socket connections one user (by uid; root exempt) and everyone
  // together may hold open.
  std::optional<uint32_t> connections_per_user;
  std::optional<uint32_t> connections_total;
  std::optional<uint32_t> streams_per_user;
  std::optional<uint32_t> streams_total;
  std::optional<uint32_t> stream_messages_per_second;
  std::optional<uint32_t> max_message_bytes;
  // Tasks each live task session's graph keeps in memory (0: all).
  std::optional<uint32_t> task_graph_tasks;
  // Prometheus /metrics on 127.0.0.1:PORT (0: a free port, logged).
  std::optional<uint32_t> metrics_port;

  // Unknown keys and wrong types are errors that name the line.
  static Result<DaemonConfig> parse(std::string_view toml_text, std::string_view source_name);
  static Result<DaemonConfig> load(const std::filesystem::path& path);

  // Fields set in `over` replace ours.
  void overlay(const DaemonConfig& over);
};

// Checks shared by the config file and the command line. The messages say
// what is wrong with the value; the caller prefixes the flag or the key.
// A node name: 1 to 63 bytes of A-Z a-z 0-9 . _ -
Status checkNodeName(std::string_view name);
// A listen address: HOST:PORT, HOST an IPv4 dotted quad, [IPv6] or a host
// name, PORT 1..65535.
Status checkListenAddress(std::string_view address);
// A recording quota: a whole number of bytes with an optional binary unit
// (K, M, G, T, or KiB, MiB, GiB, TiB), from 1 MiB to 1024 TiB.
Result<uint64_t> parseRecordingQuota(std::string_view text);

}  // namespace nk
