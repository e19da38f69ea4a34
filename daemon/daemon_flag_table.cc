#include "daemon_flag_table.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "daemon_options.h"
#include "logger.h"

namespace nk {

namespace {

using Flag = DaemonFlagTable::Flag;
using Parsed = DaemonFlagTable::Parsed;
using Range = DaemonFlagTable::Range;
using Value = DaemonFlagTable::Value;
using OptionalValue = std::optional<std::string>;

constexpr std::string_view kFaultTree = "Fault localisation tree";
constexpr std::string_view kTaskRecordings = "Task recordings (STATE_DIR/recordings)";

// A recording quota, as the config file takes it.
auto quota(std::optional<uint64_t> DaemonConfig::*field) {
  return [field](const Flag& flag, Parsed& parsed, const OptionalValue& value) -> Status {
    auto bytes = parseRecordingQuota(*value);
    if (!bytes) return invalidArgument(std::string(flag.name) + " " + bytes.error().message);
    parsed.config.*field = *bytes;
    return {};
  };
}
constexpr std::string_view kPeerTls = "Mutual TLS between peer daemons";
constexpr std::string_view kConnections = "Client connections and streams (Unix socket)";

// A string taken as it is.
auto text(std::optional<std::string> DaemonConfig::*field) {
  return [field](const Flag&, Parsed& parsed, const OptionalValue& value) -> Status {
    parsed.config.*field = *value;
    return {};
  };
}

// A string checked by the config file's check for the same key.
auto checked(std::optional<std::string> DaemonConfig::*field, Status (*check)(std::string_view)) {
  return [field, check](const Flag& flag, Parsed& parsed, const OptionalValue& value) -> Status {
    if (Status s = check(*value); !s) return invalidArgument(std::string(flag.name) + " " + s.error().message);
    parsed.config.*field = *value;
    return {};
  };
}

// A whole number inside the flag's range.
auto number(std::optional<uint32_t> DaemonConfig::*field) {
  return [field](const Flag& flag, Parsed& parsed, const OptionalValue& value) -> Status {
    const std::string& given = *value;
    uint32_t parsed_number = 0;
    auto [end, ec] = std::from_chars(given.data(), given.data() + given.size(), parsed_number);
    if (ec != std::errc() || end != given.data() + given.size() || parsed_number < flag.range->low ||
        parsed_number > flag.range->high)
      return invalidArgument(std::string(flag.name) + " must be a number between " + std::to_string(flag.range->low) +
                             " and " + std::to_string(flag.range->high) + ", not '" + given + "'");
    parsed.config.*field = parsed_number;
    return {};
  };
}

// Names the default that meson configured; built once, as the table holds views.
const std::string& configHelp() {
  static const std::string text = "config file (default " + defaultConfigPath().string() +
                                  ";\na missing default file is fine, a missing --config is not)";
  return text;
}

const std::vector<Flag>& table() {
  static const std::vector<Flag> flags = {
      {.name = "--config",
       .value = Value::kRequired,
       .value_name = "PATH",
       .help = configHelp(),
       .set = [](const Flag&, Parsed& parsed, const OptionalValue& value) -> Status {
         parsed.config_path = *value;
         return {};
       }},
      {.name = "--socket",
       .value = Value::kRequired,
       .value_name = "PATH",
       .help = "Unix socket to serve (default /run/nodekeeper/nodekeeperd.sock)",
       .set = text(&DaemonConfig::socket)},
      {.name = "--state-dir",
       .value = Value::kRequired,
       .value_name = "DIR",
       .help = "saved controls and, when emulating, the emulated sysfs\n"
               "tree (default /var/lib/nodekeeper)",
       .set = text(&DaemonConfig::state_dir)},
      {.name = "--emulate",
       .value = Value::kOptional,
       .value_name = "PROFILE",
       .help = "run on an emulated node: PROFILE is a profile name\n"
               "(xeon-e5-2630, intel-pstate-laptop) or a .toml file;\n"
               "runs unprivileged",
       .set = [](const Flag&, Parsed& parsed, const OptionalValue& value) -> Status {
         parsed.config.emulate = true;
         if (value) parsed.config.profile = *value;
         return {};
       }},
      {.name = "--emulate-ignore-host-load",
       .help = "emulated node: only the managed apps' threads drive its\n"
               "cores, not the host's other load (budget tests)",
       .set = [](const Flag&, Parsed& parsed, const OptionalValue&) -> Status {
         parsed.config.emulate_ignore_host_load = true;
         return {};
       }},
      {.name = "--sysfs-root",
       .value = Value::kRequired,
       .value_name = "DIR",
       .help = "read and write sysfs under DIR instead of / (testing)",
       .set = text(&DaemonConfig::sysfs_root)},
      {.name = "--telemetry-interval-ms",
       .value = Value::kRequired,
       .value_name = "N",
       .help = "sampling period of the telemetry sampler (default 100)",
       .range = Range{10, 60000},
       .set = number(&DaemonConfig::telemetry_interval_ms)},
      {.name = "--admin-group",
       .value = Value::kRequired,
       .value_name = "NAME",
       .help = "group whose members are admins (default nodekeeper)",
       .set = text(&DaemonConfig::admin_group)},
      {.name = "--dct-interval-ms",
       .value = Value::kRequired,
       .value_name = "N",
       .help = "energy manager: dT_DCT, the thread-count and affinity\n"
               "period (default 500, 20..60000)",
       .range = Range{20, 60000},
       .set = number(&DaemonConfig::dct_interval_ms)},
      {.name = "--dvfs-per-dct",
       .value = Value::kRequired,
       .value_name = "N",
       .help = "energy manager: frequency steps per dT_DCT, so\n"
               "dT_DVFS = dT_DCT / N (default 10, 1..100)",
       .range = Range{1, 100},
       .set = number(&DaemonConfig::dvfs_per_dct)},
      {.name = "--debug-grace-s",
       .value = Value::kRequired,
       .value_name = "N",
       .help = "task debugging: seconds a break outlives the frontend\n"
               "that held it (default 30, 1..86400)",
       .range = Range{1, 86400},
       .set = number(&DaemonConfig::debug_grace_s)},
      {.name = "--log-level",
       .value = Value::kRequired,
       .value_name = "LEVEL",
       .help = "error, warning, info (default) or debug",
       .set = [](const Flag&, Parsed& parsed, const OptionalValue& value) -> Status {
         auto level = Logger::parseLevel(*value);
         if (!level) return level.error();
         parsed.config.log_level = *value;
         return {};
       }},
      {.name = "--help",
       .short_name = "-h",
       .help = "this help",
       .set = [](const Flag&, Parsed& parsed, const OptionalValue&) -> Status {
         parsed.show_help = true;
         return {};
       }},
      {.name = "--version",
       .help = "print the version",
       .set = [](const Flag&, Parsed& parsed, const OptionalValue&) -> Status {
         parsed.show_version = true;
         return {};
       }},
      {.name = "--node-name",
       .value = Value::kRequired,
       .value_name = "NAME",
       .section = kFaultTree,
       .help = "this node's name in fault trees and to PMPI agents:\n"
               "1 to 63 of A-Z a-z 0-9 . _ - (default: the host name)",
       .set = checked(&DaemonConfig::node_name, checkNodeName)},
      {.name = "--listen",
       .value = Value::kRequired,
       .value_name = "ADDR:PORT",
       .section = kFaultTree,
       .help = "serve the daemon-to-daemon fault tree service on TCP,\n"
               "e.g. 10.1.0.7:7400, [fd00::7]:7400 or node007:7400\n"
               "(default: off); needs --peer-token or --peer-cert",
       .set = checked(&DaemonConfig::listen, checkListenAddress)},
      {.name = "--peer-token",
       .value = Value::kRequired,
       .value_name = "FILE",
       .section = kFaultTree,
       .help = "file with the shared token that authenticates peer\n"
               "daemons; sent to peers even without --listen",
       .set = text(&DaemonConfig::peer_token)},
      {.name = "--fault-rules",
       .value = Value::kRequired,
       .value_name = "FILE",
       .section = kFaultTree,
       .help = "rule file for fault analysis (default: built-in rules)",
       .set = text(&DaemonConfig::fault_rules)},
      {.name = "--fault-tree-fan-out",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kFaultTree,
       .help = "children of each node in the fault tree (default 4,\n"
               "1..64)",
       .range = Range{1, 64},
       .set = number(&DaemonConfig::fault_tree_fan_out)},
      {.name = "--tree-heartbeat-ms",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kFaultTree,
       .help = "heartbeat period from a node to its fault localisation\n"
               "node (default 100, 10..60000)",
       .range = Range{10, 60000},
       .set = number(&DaemonConfig::tree_heartbeat_ms)},
      {.name = "--tree-heartbeat-misses",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kFaultTree,
       .help = "heartbeats missed before a node is suspected (default\n"
               "3, 1..100)",
       .range = Range{1, 100},
       .set = number(&DaemonConfig::tree_heartbeat_misses)},
      {.name = "--recording-quota-per-user",
       .value = Value::kRequired,
       .value_name = "SIZE",
       .section = kTaskRecordings,
       .help = "bytes of task recordings one user may keep (default\n"
               "2GiB, 1MiB..1024TiB); their oldest ended ones go\n"
               "first, and a live one that reaches it stops\n"
               "recording while its program runs on",
       .set = quota(&DaemonConfig::recording_quota_per_user)},
      {.name = "--recording-quota-total",
       .value = Value::kRequired,
       .value_name = "SIZE",
       .section = kTaskRecordings,
       .help = "bytes of task recordings all users together may keep\n"
               "(default 10GiB; 1MiB..1024TiB)",
       .set = quota(&DaemonConfig::recording_quota_total)},
      {.name = "--recording-max-age-days",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kTaskRecordings,
       .help = "days an ended recording is kept (default 7, 1..3650)",
       .range = Range{1, 3650},
       .set = number(&DaemonConfig::recording_max_age_days)},
      {.name = "--peer-cert",
       .value = Value::kRequired,
       .value_name = "FILE",
       .section = kPeerTls,
       .help = "this node's certificate (PEM); with --peer-key and\n"
               "--peer-ca, peers talk over mutual TLS (default: in\n"
               "clear, with a warning); the three are read again on\n"
               "SIGHUP, for a renewed certificate",
       .set = text(&DaemonConfig::peer_cert)},
      {.name = "--peer-key",
       .value = Value::kRequired,
       .value_name = "FILE",
       .section = kPeerTls,
       .help = "the certificate's private key (PEM, unencrypted,\n"
               "not readable by other users)",
       .set = text(&DaemonConfig::peer_key)},
      {.name = "--peer-ca",
       .value = Value::kRequired,
       .value_name = "FILE",
       .section = kPeerTls,
       .help = "the CA certificates (PEM) a peer's certificate must\n"
               "chain to; others are refused in the handshake",
       .set = text(&DaemonConfig::peer_ca)},
      {.name = "--connections-per-user",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kConnections,
       .help = "Unix socket connections one user may hold open;\n"
               "more are closed at once (default 64, 1..65536;\n"
               "root is exempt)",
       .range = Range{1, 65536},
       .set = number(&DaemonConfig::connections_per_user)},
      {.name = "--connections-total",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kConnections,
       .help = "Unix socket connections all users together may hold\n"
               "open (default 1024, 1..1048576; root is exempt)",
       .range = Range{1, 1048576},
       .set = number(&DaemonConfig::connections_total)},
      {.name = "--streams-per-user",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kConnections,
       .help = "streams (watches, app and debugger streams) one user\n"
               "may hold open; more end with RESOURCE_EXHAUSTED\n"
               "(default 256, 1..1048576; root is exempt)",
       .range = Range{1, 1048576},
       .set = number(&DaemonConfig::streams_per_user)},
      {.name = "--streams-total",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kConnections,
       .help = "streams all users together may hold open (default\n"
               "4096, 1..1048576; root is exempt)",
       .range = Range{1, 1048576},
       .set = number(&DaemonConfig::streams_total)},
      {.name = "--stream-messages-per-second",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kConnections,
       .help = "messages a client may send on one stream, on average\n"
               "with a burst of one second's worth; a faster stream\n"
               "is read no faster (default 10000)",
       .range = Range{1, 10000000},
       .set = number(&DaemonConfig::stream_messages_per_second)},
      {.name = "--max-message-bytes",
       .value = Value::kRequired,
       .value_name = "N",
       .section = kConnections,
       .help = "the largest message a client may send; a larger one\n"
               "ends its call with RESOURCE_EXHAUSTED (default\n"
               "4194304, 4096..1073741824)",
       .range = Range{4096, 1073741824},
       .set = number(&DaemonConfig::max_message_bytes)},
      {.name = "--task-graph-tasks",
       .value = Value::kRequired,
       .value_name = "N",
       .section = "Live task graphs",
       .help = "tasks each task session's live graph keeps in memory;\n"
               "past it, finished tasks are dropped, oldest first\n"
               "(they stay in the recording; unfinished tasks are\n"
               "never dropped) (default 1000000, 0..1000000000;\n"
               "0: keep every task)",
       .range = Range{0, 1000000000},
       .set = number(&DaemonConfig::task_graph_tasks)},
      {.name = "--metrics-port",
       .value = Value::kRequired,
       .value_name = "PORT",
       .section = "Prometheus metrics",
       .help = "serve Prometheus metrics at http://127.0.0.1:PORT/metrics\n"
               "(loopback only; 0: a free port, which the log names)\n"
               "(default: off; 0..65535)",
       .range = Range{0, 65535},
       .set = number(&DaemonConfig::metrics_port)},
  };
  return flags;
}

Error needsAValue(const Flag& flag) { return invalidArgument(std::string(flag.name) + " needs a value"); }

// The flag's value: after '=' in the same word, or the next word, which
// `index` then moves past.
Result<OptionalValue> takeValue(const Flag& flag, std::optional<std::string_view> inline_value,
                                std::span<const char* const> args, size_t& index) {
  bool has_next = index + 1 < args.size();
  switch (flag.value) {
    case Value::kNone:
      return OptionalValue();
    case Value::kOptional:
      if (inline_value) return OptionalValue(*inline_value);
      if (has_next && args[index + 1][0] != '-') return OptionalValue(args[++index]);
      return OptionalValue();
    case Value::kRequired:
      if (inline_value) {
        if (inline_value->empty()) return needsAValue(flag);
        return OptionalValue(*inline_value);
      }
      if (!has_next || std::string_view(args[index + 1]).starts_with("--")) return needsAValue(flag);
      return OptionalValue(args[++index]);
  }
  return OptionalValue();
}

// The column where help texts start; a longer flag puts its text below.
constexpr size_t kHelpColumn = 25;

void appendHelpEntry(std::string& out, const Flag& flag) {
  std::string label = "  ";
  if (!flag.short_name.empty()) label.append(flag.short_name).append(", ");
  label.append(flag.name);
  if (flag.value == Value::kRequired) label.append(" ").append(flag.value_name);
  if (flag.value == Value::kOptional) label.append(" [").append(flag.value_name).append("]");
  if (label.size() < kHelpColumn) label.resize(kHelpColumn, ' ');
  else label.append("\n").append(kHelpColumn, ' ');
  out += label;
  for (char c : flag.help) {
    out += c;
    if (c == '\n') out.append(kHelpColumn, ' ');
  }
  out += '\n';
}

constexpr std::string_view kHelpIntro = R"(Usage: nodekeeperd [OPTIONS]

The nodekeeper node daemon: owns CPU frequency, power caps and thermal
sensing on this node and serves them over gRPC on a Unix socket.
)";

constexpr std::string_view kHelpOutro = "Flags override the config file, which overrides the defaults.\n";

}  // namespace

std::span<const Flag> DaemonFlagTable::flags() { return table(); }

const Flag* DaemonFlagTable::find(std::string_view name) {
  auto it = std::find_if(table().begin(), table().end(), [&](const Flag& flag) {
    return flag.name == name || (!flag.short_name.empty() && flag.short_name == name);
  });
  return it == table().end() ? nullptr : &*it;
}

Result<Parsed> DaemonFlagTable::parse(std::span<const char* const> args) {
  Parsed parsed;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view word = args[i];
    std::optional<std::string_view> inline_value;
    if (size_t eq = word.find('='); word.starts_with("--") && eq != std::string_view::npos) {
      inline_value = word.substr(eq + 1);
      word = word.substr(0, eq);
    }
    const Flag* flag = find(word);
    if (flag == nullptr)
      return invalidArgument("unknown option '" + std::string(args[i]) + "' (see nodekeeperd --help)");
    auto value = takeValue(*flag, inline_value, args, i);
    if (!value) return value.error();
    if (Status s = flag->set(*flag, parsed, *value); !s) return s.error();
  }
  return parsed;
}

std::string DaemonFlagTable::helpText() {
  std::string out(kHelpIntro);
  std::string_view section;
  for (const Flag& flag : table()) {
    if (flag.section != section) {
      section = flag.section;
      out.append("\n").append(section).append(":\n");
    }
    appendHelpEntry(out, flag);
  }
  out.append("\n").append(kHelpOutro);
  return out;
}

}  // namespace nk
