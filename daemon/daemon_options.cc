#include "daemon_options.h"

#include <charconv>
#include <string_view>

namespace nk {

std::string DaemonOptions::helpText() {
  return R"(Usage: nodekeeperd [OPTIONS]

The nodekeeper node daemon: owns CPU frequency, power caps and thermal
sensing on this node and serves them over gRPC on a Unix socket.

Options:
  --config PATH          config file (default /etc/nodekeeper/nodekeeperd.toml;
                         a missing default file is fine, a missing --config is not)
  --socket PATH          Unix socket to serve (default /run/nodekeeper/nodekeeperd.sock)
  --state-dir DIR        saved controls and, when emulating, the emulated sysfs
                         tree (default /var/lib/nodekeeper)
  --emulate [PROFILE]    run on an emulated node: PROFILE is a profile name
                         (xeon-e5-2630, intel-pstate-laptop) or a .toml file;
                         runs unprivileged
  --sysfs-root DIR       read and write sysfs under DIR instead of / (testing)
  --telemetry-interval-ms N
                         sampling period of the telemetry sampler (default 100)
  --admin-group NAME     group whose members are admins (default nodekeeper)
  --dct-interval-ms N    energy manager: dT_DCT, the thread-count and affinity
                         period (default 500, 20..60000)
  --dvfs-per-dct N       energy manager: frequency steps per dT_DCT, so
                         dT_DVFS = dT_DCT / N (default 10, 1..100)
  --debug-grace-s N      task debugging: seconds a break outlives the frontend
                         that held it (default 30, 1..86400)
  --log-level LEVEL      error, warning, info (default) or debug
  -h, --help             this help
  --version              print the version

Fault localisation tree:
  --node-name NAME       this node's name in fault trees and to PMPI agents:
                         1 to 63 of A-Z a-z 0-9 . _ - (default: the host name)
  --listen ADDR:PORT     serve the daemon-to-daemon fault tree service on TCP,
                         e.g. 10.1.0.7:7400, [fd00::7]:7400 or node007:7400
                         (default: off); needs --peer-token
  --peer-token FILE      file with the shared token that authenticates peer
                         daemons; sent to peers even without --listen
  --fault-rules FILE     rule file for fault analysis (default: built-in rules)
  --fault-tree-fan-out N children of each node in the fault tree (default 4,
                         1..64)
  --tree-heartbeat-ms N  heartbeat period from a node to its fault localisation
                         node (default 100, 10..60000)
  --tree-heartbeat-misses N
                         heartbeats missed before a node is suspected (default
                         3, 1..100)

Flags override the config file, which overrides the defaults.
)";
}

Result<DaemonOptions> DaemonOptions::fromCommandLine(std::span<const char* const> args) {
  DaemonConfig flags;
  std::optional<std::string> config_path;
  bool show_help = false, show_version = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::optional<std::string_view> inline_value;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto value = [&]() -> Result<std::string> {
      if (inline_value) {
        if (inline_value->empty()) return invalidArgument(std::string(arg) + " needs a value");
        return std::string(*inline_value);
      }
      if (i + 1 >= args.size() || std::string_view(args[i + 1]).rfind("--", 0) == 0)
        return invalidArgument(std::string(arg) + " needs a value");
      return std::string(args[++i]);
    };
    auto set = [&](std::optional<std::string>& field) -> Status {
      auto v = value();
      if (!v) return v.error();
      field = std::move(*v);
      return {};
    };
    auto setNumber = [&](std::optional<uint32_t>& field, uint32_t low, uint32_t high) -> Status {
      auto v = value();
      if (!v) return v.error();
      uint32_t number = 0;
      auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), number);
      if (ec != std::errc() || ptr != v->data() + v->size() || number < low || number > high)
        return invalidArgument(std::string(arg) + " must be a number between " + std::to_string(low) + " and " +
                               std::to_string(high) + ", not '" + *v + "'");
      field = number;
      return {};
    };
    // A string checked by the config file's check for the same key.
    auto setChecked = [&](std::optional<std::string>& field, Status (*check)(std::string_view)) -> Status {
      auto v = value();
      if (!v) return v.error();
      if (auto checked = check(*v); !checked) return invalidArgument(std::string(arg) + " " + checked.error().message);
      field = std::move(*v);
      return {};
    };
    Status status;
    if (arg == "-h" || arg == "--help") show_help = true;
    else if (arg == "--version") show_version = true;
    else if (arg == "--config") status = set(config_path);
    else if (arg == "--socket") status = set(flags.socket);
    else if (arg == "--state-dir") status = set(flags.state_dir);
    else if (arg == "--sysfs-root") status = set(flags.sysfs_root);
    else if (arg == "--admin-group") status = set(flags.admin_group);
    else if (arg == "--log-level") {
      status = set(flags.log_level);
      if (status) {
        auto level = Logger::parseLevel(*flags.log_level);
        if (!level) status = level.error();
      }
    } else if (arg == "--telemetry-interval-ms") {
      status = setNumber(flags.telemetry_interval_ms, 10, 60000);
    } else if (arg == "--dct-interval-ms") {
      status = setNumber(flags.dct_interval_ms, 20, 60000);
    } else if (arg == "--debug-grace-s") {
      status = setNumber(flags.debug_grace_s, 1, 86400);
    } else if (arg == "--dvfs-per-dct") {
      status = setNumber(flags.dvfs_per_dct, 1, 100);
    } else if (arg == "--node-name") {
      status = setChecked(flags.node_name, checkNodeName);
    } else if (arg == "--listen") {
      status = setChecked(flags.listen, checkListenAddress);
    } else if (arg == "--peer-token") {
      status = set(flags.peer_token);
    } else if (arg == "--fault-rules") {
      status = set(flags.fault_rules);
    } else if (arg == "--fault-tree-fan-out") {
      status = setNumber(flags.fault_tree_fan_out, 1, 64);
    } else if (arg == "--tree-heartbeat-ms") {
      status = setNumber(flags.tree_heartbeat_ms, 10, 60000);
    } else if (arg == "--tree-heartbeat-misses") {
      status = setNumber(flags.tree_heartbeat_misses, 1, 100);
    } else if (arg == "--emulate") {
      flags.emulate = true;
      // The profile is optional: take the next word unless it is a flag.
      if (inline_value) flags.profile = std::string(*inline_value);
      else if (i + 1 < args.size() && args[i + 1][0] != '-') flags.profile = std::string(args[++i]);
    } else {
      return invalidArgument("unknown option '" + std::string(args[i]) + "' (see nodekeeperd --help)");
    }
    if (!status) return status.error();
  }

  DaemonOptions options;
  options.show_help = show_help;
  options.show_version = show_version;
  if (show_help || show_version) return options;

  DaemonConfig merged;
  if (config_path) options.config_path = *config_path;
  std::error_code ec;
  if (config_path || std::filesystem::exists(options.config_path, ec)) {
    auto file = DaemonConfig::load(options.config_path);
    if (!file) return file.error();
    merged = *file;
  }
  merged.overlay(flags);

  if (merged.socket) options.socket_path = *merged.socket;
  if (merged.state_dir) options.state_dir = *merged.state_dir;
  if (merged.emulate) options.emulate = *merged.emulate;
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
  if (options.emulate && options.sysfs_root != "/")
    return invalidArgument("--emulate and --sysfs-root exclude each other (the emulated node has its own sysfs tree)");
  // A token without --listen is fine: the daemon still sends it to peers.
  if (!options.listen_address.empty() && options.peer_token_file.empty()) {
    if (flags.listen) return invalidArgument("--listen needs --peer-token FILE: peers must authenticate");
    return invalidArgument("listen in " + options.config_path.string() +
                           " needs peer_token there or --peer-token FILE: peers must authenticate");
  }
  return options;
}

}  // namespace nk
