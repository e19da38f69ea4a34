#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "base/result.h"
#include "daemon_config.h"
#include "energy/policy_config.h"
#include "api/connection_limits.h"
#include "api/stream_host.h"
#include "logger.h"
#include "tasks/recording_quota.h"

namespace nk {

// Where meson installs the config file (SYSCONFDIR/nodekeeper/nodekeeperd.toml),
// the file the installed unit names too.
std::filesystem::path defaultConfigPath();

// Everything the daemon needs to start: defaults, overridden by the config
// file, overridden by the command line.
struct DaemonOptions {
  std::filesystem::path config_path = defaultConfigPath();
  std::filesystem::path socket_path = "/run/nodekeeper/nodekeeperd.sock";
  std::filesystem::path state_dir = "/var/lib/nodekeeper";
  bool emulate = false;
  // The emulated cores follow only the managed apps' threads, never the
  // host's other load (EmulatedNode::Options::ignore_host_load).
  bool emulate_ignore_host_load = false;
  std::string profile;  // name or path; empty: the default profile
  std::filesystem::path sysfs_root = "/";
  LogLevel log_level = LogLevel::kInfo;
  uint32_t telemetry_interval_ms = 100;
  std::string admin_group = "nodekeeper";
  PolicyConfig energy;  // dT_DCT and N (dT_DVFS = dT_DCT / N)
  // How long a debugger's break outlives its frontend.
  uint32_t debug_grace_s = 30;
  // Fault localisation tree.
  // This node's name in fault trees and to PMPI agents; empty: the host name
  // (the daemon decides).
  std::string node_name;
  // HOST:PORT of the daemon-to-daemon fault tree service (TCP); empty: off.
  std::string listen_address;
  // The shared token that authenticates peer daemons (needed by --listen).
  std::filesystem::path peer_token_file;
  // Rule file for fault analysis; empty: the built-in rules.
  std::filesystem::path fault_rules_file;
  uint32_t fault_tree_fan_out = 4;
  // Heartbeat period from a node to its fault localisation node, and the
  // heartbeats missed before a node is suspected.
  uint32_t tree_heartbeat_ms = 100;
  uint32_t tree_heartbeat_misses = 3;
  // Task recordings under STATE_DIR/recordings: each user's and everyone's
  // bytes, and how long an ended one is kept.
  RecordingLimits recording_limits;
  bool show_help = false;
  bool show_version = false;
  // Mutual TLS between peer daemons (all three, or none: in clear).
  std::filesystem::path peer_cert_file;
  std::filesystem::path peer_key_file;
  std::filesystem::path peer_ca_file;
  bool peerTls() const { return !peer_cert_file.empty(); }
  // Unix socket connections per user and in all.
  ConnectionLimits::Settings connection_limits;
  // Streams per user and in all, and what one stream's client may send.
  StreamHost::Settings stream_limits;
  // The largest message a client may send (gRPC refuses a larger one).
  uint32_t max_message_bytes = 4u << 20;
  // Tasks each task session's live graph keeps in memory (TaskGraph's
  // window); 0: every task.
  uint32_t task_graph_tasks = 1'000'000;
  // Prometheus /metrics on 127.0.0.1 at this port (0: a free one, logged);
  // none: off.
  std::optional<uint16_t> metrics_port;

  static Result<DaemonOptions> fromCommandLine(std::span<const char* const> args);
  static std::string helpText();
};

}  // namespace nk
