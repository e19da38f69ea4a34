#include "daemon_options.h"

#include <grp.h>

#include "daemon_flag_table.h"

namespace nk {

#ifndef NK_DEFAULT_CONFIG_PATH
#define NK_DEFAULT_CONFIG_PATH "/etc/nodekeeper/nodekeeperd.toml"
#endif

std::filesystem::path defaultConfigPath() { return NK_DEFAULT_CONFIG_PATH; }

namespace {

// The config file under the flags: the file --config names (which must
// exist), or the default file if there is one.
Result<DaemonConfig> configUnderFlags(const DaemonFlagTable::Parsed& flags, const std::filesystem::path& config_path) {
  DaemonConfig merged;
  std::error_code ec;
  if (flags.config_path || std::filesystem::exists(config_path, ec)) {
    auto file = DaemonConfig::load(config_path);
    if (!file) return file.error();
    merged = *file;
  }
  merged.overlay(flags.config);
  return merged;
}

// The merged settings into the options, over their defaults.
Status takeSettings(const DaemonConfig& merged, DaemonOptions& options) {
  if (merged.socket) options.socket_path = *merged.socket;
  if (merged.state_dir) options.state_dir = *merged.state_dir;
  if (merged.emulate) options.emulate = *merged.emulate;
  if (merged.emulate_ignore_host_load) options.emulate_ignore_host_load = *merged.emulate_ignore_host_load;
  if (merged.profile) options.profile = *merged.profile;
  if (merged.sysfs_root) options.sysfs_root = *merged.sysfs_root;
  if (merged.admin_group) options.admin_group = *merged.admin_group;
  if (merged.telemetry_interval_ms) options.telemetry_interval_ms = *merged.telemetry_interval_ms;
  if (merged.dct_interval_ms) options.energy.dct_interval_s = *merged.dct_interval_ms / 1000.0;
  if (merged.dvfs_per_dct) options.energy.dvfs_per_dct = *merged.dvfs_per_dct;
  if (merged.debug_grace_s) options.debug_grace_s = *merged.debug_grace_s;
  if (merged.node_name) options.node_name = *merged.node_name;
  if (merged.listen) options.listen_address = *merged.listen;
  if (merged.peer_token) options.peer_token_file = *merged.peer_token;
  if (merged.fault_rules) options.fault_rules_file = *merged.fault_rules;
  if (merged.fault_tree_fan_out) options.fault_tree_fan_out = *merged.fault_tree_fan_out;
  if (merged.tree_heartbeat_ms) options.tree_heartbeat_ms = *merged.tree_heartbeat_ms;
  if (merged.tree_heartbeat_misses) options.tree_heartbeat_misses = *merged.tree_heartbeat_misses;
  if (merged.log_level) {
    auto level = Logger::parseLevel(*merged.log_level);
    if (!level) return level.error();
    options.log_level = *level;
  }
  if (merged.recording_quota_per_user) options.recording_limits.per_user_bytes = *merged.recording_quota_per_user;
  if (merged.recording_quota_total) options.recording_limits.total_bytes = *merged.recording_quota_total;
  if (merged.recording_max_age_days)
    options.recording_limits.max_age = std::chrono::hours(24) * *merged.recording_max_age_days;
  if (merged.peer_cert) options.peer_cert_file = *merged.peer_cert;
  if (merged.peer_key) options.peer_key_file = *merged.peer_key;
  if (merged.peer_ca) options.peer_ca_file = *merged.peer_ca;
  if (merged.connections_per_user) options.connection_limits.per_user = *merged.connections_per_user;
  if (merged.connections_total) options.connection_limits.total = *merged.connections_total;
  if (merged.streams_per_user) options.stream_limits.streams.per_user = *merged.streams_per_user;
  if (merged.streams_total) options.stream_limits.streams.total = *merged.streams_total;
  if (merged.stream_messages_per_second) options.stream_limits.messages_per_second = *merged.stream_messages_per_second;
  if (merged.max_message_bytes) options.max_message_bytes = *merged.max_message_bytes;
  if (merged.task_graph_tasks) options.task_graph_tasks = *merged.task_graph_tasks;
  if (merged.metrics_port) options.metrics_port = static_cast<uint16_t>(*merged.metrics_port);
  return {};
}

// Settings that are fine alone but not together; `flags` tells whether the
// message should name a flag or the config file.
Status checkCombinations(const DaemonOptions& options, const DaemonConfig& flags) {
  if (options.emulate && options.sysfs_root != "/")
    return invalidArgument("--emulate and --sysfs-root exclude each other (the emulated node has its own sysfs tree)");
  if (options.emulate_ignore_host_load && !options.emulate)
    return invalidArgument("--emulate-ignore-host-load needs --emulate: only an emulated node's cores follow host load");
  // A token without --listen is fine: the daemon still sends it to peers.
  // Mutual TLS authenticates peers by itself; the token is then an option.
  if (!options.listen_address.empty() && options.peer_token_file.empty() && !options.peerTls()) {
    if (flags.listen)
      return invalidArgument("--listen needs --peer-token FILE or mutual TLS (--peer-cert, --peer-key, --peer-ca): "
                             "peers must authenticate");
    return invalidArgument("listen in " + options.config_path.string() +
                           " needs peer_token there, --peer-token FILE or mutual TLS (peer_cert, peer_key, peer_ca): "
                           "peers must authenticate");
  }
  const bool cert = !options.peer_cert_file.empty(), key = !options.peer_key_file.empty(),
             ca = !options.peer_ca_file.empty();
  if ((cert || key || ca) && !(cert && key && ca)) {
    std::string missing;
    auto need = [&](bool given, const char* flag, const char* config_key) {
      if (!given) missing += std::string(missing.empty() ? "" : ", ") + flag + " (" + config_key + ")";
    };
    need(cert, "--peer-cert", "peer_cert");
    need(key, "--peer-key", "peer_key");
    need(ca, "--peer-ca", "peer_ca");
    return invalidArgument("mutual TLS needs this node's certificate, its key and the peers' CA together; missing " +
                           missing);
  }
  if (options.connection_limits.per_user > options.connection_limits.total)
    return invalidArgument("--connections-per-user (connections_per_user) " +
                           std::to_string(options.connection_limits.per_user) +
                           " is more than --connections-total (connections_total) " +
                           std::to_string(options.connection_limits.total));
  if (options.stream_limits.streams.per_user > options.stream_limits.streams.total)
    return invalidArgument("--streams-per-user (streams_per_user) " +
                           std::to_string(options.stream_limits.streams.per_user) +
                           " is more than --streams-total (streams_total) " +
                           std::to_string(options.stream_limits.streams.total));
  return {};
}

}  // namespace

std::string DaemonOptions::helpText() { return DaemonFlagTable::helpText(); }

Result<DaemonOptions> DaemonOptions::fromCommandLine(std::span<const char* const> args) {
  auto flags = DaemonFlagTable::parse(args);
  if (!flags) return flags.error();
  DaemonOptions options;
  options.show_help = flags->show_help;
  options.show_version = flags->show_version;
  if (options.show_help || options.show_version) return options;

  if (flags->config_path) options.config_path = *flags->config_path;
  auto merged = configUnderFlags(*flags, options.config_path);
  if (!merged) return merged.error();
  if (Status s = takeSettings(*merged, options); !s) return s.error();
  if (Status s = checkCombinations(options, flags->config); !s) return s.error();
  // An admin group asked for by name must exist: a typo would otherwise
  // leave the node with no admins and nothing said.
  if (merged->admin_group && ::getgrnam(merged->admin_group->c_str()) == nullptr)
    return invalidArgument(std::string(flags->config.admin_group ? "--admin-group " : "admin_group ") + "'" +
                           *merged->admin_group + "' is no group on this host (see getent group)");
  return options;
}

}  // namespace nk
