#include "daemon_config.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "daemon_options.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

TEST(DaemonConfig, ParsesKnownKeys) {
  auto config = DaemonConfig::parse(R"(
socket = "/tmp/x.sock"
state_dir = "/tmp/state"
emulate = true
profile = "intel-pstate-laptop"
log_level = "debug"
telemetry_interval_ms = 250
admin_group = "hpcadmin"
)", "test.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(*config->socket, "/tmp/x.sock");
  EXPECT_EQ(*config->emulate, true);
  EXPECT_EQ(*config->telemetry_interval_ms, 250u);
  EXPECT_EQ(*config->admin_group, "hpcadmin");
  EXPECT_FALSE(config->sysfs_root.has_value());
}

TEST(DaemonConfig, ErrorsNameTheLine) {
  auto unknown = DaemonConfig::parse("socket = \"/a\"\nsokcet = \"/b\"\n", "x.toml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("x.toml:2"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("sokcet"), std::string::npos);

  auto syntax = DaemonConfig::parse("socket = \n", "y.toml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.error().message.find("y.toml:1"), std::string::npos) << syntax.error().message;

  auto type = DaemonConfig::parse("emulate = \"yes\"\n", "z.toml");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.error().message.find("emulate"), std::string::npos);

  EXPECT_FALSE(DaemonConfig::parse("telemetry_interval_ms = 1\n", "t").ok());
  EXPECT_FALSE(DaemonConfig::parse("log_level = \"loud\"\n", "t").ok());
}

TEST(DaemonOptions, FlagsOverrideDefaults) {
  const char* argv[] = {"nodekeeperd", "--emulate", "--state-dir", "/tmp/s", "--socket=/tmp/a.sock",
                        "--config", "/nonexistent/for/sure.toml"};
  auto missing = DaemonOptions::fromCommandLine(argv);
  ASSERT_FALSE(missing.ok());  // an explicit --config must exist
  EXPECT_NE(missing.error().message.find("/nonexistent/for/sure.toml"), std::string::npos);

  const char* argv2[] = {"nodekeeperd", "--emulate", "intel-pstate-laptop", "--state-dir", "/tmp/s",
                         "--socket=/tmp/a.sock", "--log-level", "debug"};
  auto options = DaemonOptions::fromCommandLine(argv2);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->emulate);
  EXPECT_EQ(options->profile, "intel-pstate-laptop");
  EXPECT_EQ(options->state_dir, "/tmp/s");
  EXPECT_EQ(options->socket_path, "/tmp/a.sock");
  EXPECT_EQ(options->log_level, LogLevel::kDebug);
}

TEST(DaemonOptions, EmulateWithoutProfileBeforeAnotherFlag) {
  const char* argv[] = {"nodekeeperd", "--emulate", "--state-dir", "/tmp/s"};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->emulate);
  EXPECT_TRUE(options->profile.empty());
}

TEST(DaemonOptions, EmulatedNodeCanIgnoreHostLoad) {
  const char* argv[] = {"nodekeeperd", "--emulate", "--emulate-ignore-host-load", "--state-dir", "/tmp/s"};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->emulate_ignore_host_load);
  const char* plain[] = {"nodekeeperd", "--emulate", "--state-dir", "/tmp/s"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(plain)->emulate_ignore_host_load);
  // Real cores follow whatever runs on them: the flag alone is a mistake.
  const char* alone[] = {"nodekeeperd", "--emulate-ignore-host-load"};
  auto refused = DaemonOptions::fromCommandLine(alone);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("needs --emulate"), std::string::npos) << refused.error().message;
  auto config = DaemonConfig::parse("emulate_ignore_host_load = true\n", "n.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->emulate_ignore_host_load, true);
  EXPECT_FALSE(DaemonConfig::parse("emulate_ignore_host_load = 1\n", "n.toml").ok());
}

TEST(DaemonOptions, RejectsBadFlags) {
  const char* unknown[] = {"nodekeeperd", "--frobnicate"};
  auto a = DaemonOptions::fromCommandLine(unknown);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("--frobnicate"), std::string::npos);
  const char* no_value[] = {"nodekeeperd", "--socket"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(no_value).ok());
  const char* bad_level[] = {"nodekeeperd", "--log-level", "chatty"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(bad_level).ok());
  const char* both[] = {"nodekeeperd", "--emulate", "--sysfs-root", "/tmp"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(both).ok());
  const char* interval[] = {"nodekeeperd", "--telemetry-interval-ms", "5"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(interval).ok());
}

// The shipped example config documents every key with its default, commented
// out. Uncommented, it must parse and agree with the built-in defaults.
TEST(DaemonConfig, ShippedExampleMatchesDefaults) {
  std::ifstream in(NK_SOURCE_ROOT "/systemd/nodekeeperd.toml");
  ASSERT_TRUE(in) << "cannot open the example config";
  std::stringstream uncommented;
  std::regex setting(R"(^#([a-z_]+ = .*)$)");
  std::string line;
  int settings = 0;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_match(line, match, setting)) {
      uncommented << match[1] << "\n";
      ++settings;
    }
  }
  EXPECT_EQ(settings, 33);
  auto config = DaemonConfig::parse(uncommented.str(), "nodekeeperd.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  DaemonOptions defaults;
  EXPECT_EQ(*config->socket, defaults.socket_path.string());
  EXPECT_EQ(*config->state_dir, defaults.state_dir.string());
  EXPECT_EQ(*config->emulate, defaults.emulate);
  EXPECT_EQ(*config->emulate_ignore_host_load, defaults.emulate_ignore_host_load);
  EXPECT_EQ(*config->sysfs_root, defaults.sysfs_root.string());
  EXPECT_EQ(*config->telemetry_interval_ms, defaults.telemetry_interval_ms);
  EXPECT_EQ(*config->admin_group, defaults.admin_group);
  EXPECT_EQ(*config->log_level, "info");
  EXPECT_DOUBLE_EQ(*config->dct_interval_ms / 1000.0, defaults.energy.dct_interval_s);
  EXPECT_EQ(*config->dvfs_per_dct, defaults.energy.dvfs_per_dct);
  EXPECT_EQ(*config->debug_grace_s, defaults.debug_grace_s);
  EXPECT_EQ(*config->fault_tree_fan_out, defaults.fault_tree_fan_out);
  EXPECT_EQ(*config->tree_heartbeat_ms, defaults.tree_heartbeat_ms);
  EXPECT_EQ(*config->tree_heartbeat_misses, defaults.tree_heartbeat_misses);
  EXPECT_EQ(*config->recording_quota_per_user, defaults.recording_limits.per_user_bytes);
  EXPECT_EQ(*config->recording_quota_total, defaults.recording_limits.total_bytes);
  EXPECT_EQ(std::chrono::hours(24) * *config->recording_max_age_days, defaults.recording_limits.max_age);
  EXPECT_EQ(*config->task_graph_tasks, defaults.task_graph_tasks);
  EXPECT_EQ(*config->connections_per_user, defaults.connection_limits.per_user);
  EXPECT_EQ(*config->connections_total, defaults.connection_limits.total);
  EXPECT_EQ(*config->streams_per_user, defaults.stream_limits.streams.per_user);
  EXPECT_EQ(*config->streams_total, defaults.stream_limits.streams.total);
  EXPECT_EQ(*config->stream_messages_per_second, defaults.stream_limits.messages_per_second);
  EXPECT_EQ(*config->max_message_bytes, defaults.max_message_bytes);
  // Unset by default: the example shows a value.
  EXPECT_TRUE(config->node_name.has_value());
  EXPECT_TRUE(config->listen.has_value());
  EXPECT_TRUE(config->peer_token.has_value());
  EXPECT_TRUE(config->fault_rules.has_value());
  EXPECT_TRUE(config->metrics_port.has_value());
}

TEST(DaemonOptions, StreamLimitsFromFlagsAndTheirBounds) {
  const char* flags[] = {"nodekeeperd",    "--config",        "/dev/null", "--streams-per-user", "10",
                         "--streams-total", "20",              "--stream-messages-per-second",    "50",
                         "--max-message-bytes", "65536"};
  auto options = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->stream_limits.streams.per_user, 10u);
  EXPECT_EQ(options->stream_limits.streams.total, 20u);
  EXPECT_EQ(options->stream_limits.messages_per_second, 50u);
  EXPECT_EQ(options->max_message_bytes, 65536u);
  const char* inverted[] = {"nodekeeperd", "--config", "/dev/null", "--streams-per-user", "30", "--streams-total", "20"};
  auto refused = DaemonOptions::fromCommandLine(inverted);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--streams-per-user (streams_per_user) 30 is more than --streams-total"),
            std::string::npos)
      << refused.error().message;
  const char* tiny[] = {"nodekeeperd", "--config", "/dev/null", "--max-message-bytes", "100"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(tiny).ok());
  EXPECT_FALSE(DaemonConfig::parse("streams_per_user = 0\n", "t").ok());
  auto from_file = DaemonConfig::parse("stream_messages_per_second = 99\n", "t");
  ASSERT_TRUE(from_file.ok()) << from_file.error().message;
  EXPECT_EQ(*from_file->stream_messages_per_second, 99u);
}

TEST(DaemonConfig, EnergyIntervalsFromFileAndFlags) {
  auto config = DaemonConfig::parse("dct_interval_ms = 250\ndvfs_per_dct = 5\n", "t");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(*config->dct_interval_ms, 250u);
  EXPECT_EQ(*config->dvfs_per_dct, 5u);
  auto too_short = DaemonConfig::parse("dct_interval_ms = 5\n", "t");
  ASSERT_FALSE(too_short.ok());
  EXPECT_NE(too_short.error().message.find("between 20 and 60000"), std::string::npos);
  EXPECT_FALSE(DaemonConfig::parse("dvfs_per_dct = 0\n", "t").ok());
  EXPECT_FALSE(DaemonConfig::parse("dvfs_per_dct = 2.5\n", "t").ok());

  const char* flags[] = {"nodekeeperd", "--config", "/dev/null", "--dct-interval-ms", "300", "--dvfs-per-dct=6"};
  auto options = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_DOUBLE_EQ(options->energy.dct_interval_s, 0.3);
  EXPECT_EQ(options->energy.dvfs_per_dct, 6u);
  EXPECT_DOUBLE_EQ(options->energy.dvfsIntervalS(), 0.05);
  const char* bad[] = {"nodekeeperd", "--config", "/dev/null", "--dvfs-per-dct", "many"};
  auto refused = DaemonOptions::fromCommandLine(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--dvfs-per-dct must be a number between 1 and 100"), std::string::npos);
}

// A config file for one test, removed with it.
class TempConfig {
 public:
  explicit TempConfig(const std::string& text) : path_(dir_.writeFile("config.toml", text)) {}
  std::string path() const { return path_.string(); }

 private:
  test::TempDir dir_{"daemon-config"};
  std::filesystem::path path_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of a refused command line (after "nodekeeperd --config /dev/null").
std::string flagRefusal(std::vector<const char*> flags) {
  flags.insert(flags.begin(), {"nodekeeperd", "--config", "/dev/null"});
  auto options = DaemonOptions::fromCommandLine(flags);
  if (options.ok()) return "(accepted)";
  return options.error().message;
}

// The message of a refused config file.
std::string fileRefusal(const std::string& toml) {
  auto config = DaemonConfig::parse(toml, "t.toml");
  if (config.ok()) return "(accepted)";
  return config.error().message;
}

// A directory reads as an empty file: it would be a config that sets nothing.
TEST(DaemonOptions, ADirectoryGivenAsTheConfigIsRefused) {
  test::TempDir dir("daemon-config");
  std::string path = dir.path().string();
  const char* argv[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.error().message, path + " is a directory, not a config file (give the .toml file itself)");
}

// A typo in the admin group would leave the node with no admins.
TEST(DaemonOptions, AnAdminGroupThatDoesNotExistIsRefused) {
  EXPECT_EQ(flagRefusal({"--admin-group", "no-such-group-nk"}),
            "--admin-group 'no-such-group-nk' is no group on this host (see getent group)");
  TempConfig file("admin_group = \"no-such-group-nk\"\n");
  std::string path = file.path();
  const char* argv[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.error().message, "admin_group 'no-such-group-nk' is no group on this host (see getent group)");
  // A group that exists is taken (root's is everywhere).
  const char* root_group[] = {"nodekeeperd", "--config", "/dev/null", "--admin-group", "root"};
  auto taken = DaemonOptions::fromCommandLine(root_group);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(taken->admin_group, "root");
}

TEST(DaemonOptions, FaultTreeDefaults) {
  const char* argv[] = {"nodekeeperd", "--config", "/dev/null"};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->node_name.empty());
  EXPECT_TRUE(options->listen_address.empty());
  EXPECT_TRUE(options->peer_token_file.empty());
  EXPECT_TRUE(options->fault_rules_file.empty());
  EXPECT_EQ(options->fault_tree_fan_out, 4u);
  EXPECT_EQ(options->tree_heartbeat_ms, 100u);
  EXPECT_EQ(options->tree_heartbeat_misses, 3u);
}

TEST(DaemonOptions, FaultTreeFlags) {
  const char* argv[] = {"nodekeeperd",       "--config",      "/dev/null",
                        "--node-name",       "node-007.a_b",  "--listen",
                        "10.1.0.7:7400",     "--peer-token",  "/etc/nk/token",
                        "--fault-rules=/etc/nk/rules.conf",   "--fault-tree-fan-out", "8",
                        "--tree-heartbeat-ms=250",            "--tree-heartbeat-misses", "5"};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->node_name, "node-007.a_b");
  EXPECT_EQ(options->listen_address, "10.1.0.7:7400");
  EXPECT_EQ(options->peer_token_file, "/etc/nk/token");
  EXPECT_EQ(options->fault_rules_file, "/etc/nk/rules.conf");
  EXPECT_EQ(options->fault_tree_fan_out, 8u);
  EXPECT_EQ(options->tree_heartbeat_ms, 250u);
  EXPECT_EQ(options->tree_heartbeat_misses, 5u);
}

TEST(DaemonConfig, FaultTreeKeys) {
  auto config = DaemonConfig::parse(R"(
node_name = "n1"
listen = "[fd00::7]:7400"
peer_token = "/etc/nk/token"
fault_rules = "/etc/nk/rules.conf"
fault_tree_fan_out = 16
tree_heartbeat_ms = 500
tree_heartbeat_misses = 10
)", "t.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(*config->node_name, "n1");
  EXPECT_EQ(*config->listen, "[fd00::7]:7400");
  EXPECT_EQ(*config->peer_token, "/etc/nk/token");
  EXPECT_EQ(*config->fault_rules, "/etc/nk/rules.conf");
  EXPECT_EQ(*config->fault_tree_fan_out, 16u);
  EXPECT_EQ(*config->tree_heartbeat_ms, 500u);
  EXPECT_EQ(*config->tree_heartbeat_misses, 10u);

  // Through the daemon's options, from a file.
  TempConfig file(R"(
node_name = "n1"
listen = "node007.cluster:7400"
peer_token = "/etc/nk/token"
fault_rules = "/etc/nk/rules.conf"
fault_tree_fan_out = 16
tree_heartbeat_ms = 500
tree_heartbeat_misses = 10
)");
  std::string path = file.path();
  const char* argv[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->node_name, "n1");
  EXPECT_EQ(options->listen_address, "node007.cluster:7400");
  EXPECT_EQ(options->peer_token_file, "/etc/nk/token");
  EXPECT_EQ(options->fault_rules_file, "/etc/nk/rules.conf");
  EXPECT_EQ(options->fault_tree_fan_out, 16u);
  EXPECT_EQ(options->tree_heartbeat_ms, 500u);
  EXPECT_EQ(options->tree_heartbeat_misses, 10u);
}

TEST(DaemonOptions, FaultTreeFlagsBeatTheConfig) {
  TempConfig file(R"(
node_name = "from-file"
listen = "10.0.0.1:7400"
peer_token = "/file/token"
fault_rules = "/file/rules"
fault_tree_fan_out = 16
tree_heartbeat_ms = 500
tree_heartbeat_misses = 10
)");
  std::string path = file.path();
  const char* argv[] = {"nodekeeperd",          "--config",      path.c_str(),
                        "--node-name",          "from-flags",    "--listen",
                        "[::1]:7500",           "--peer-token",  "/flag/token",
                        "--fault-rules",        "/flag/rules",   "--fault-tree-fan-out", "2",
                        "--tree-heartbeat-ms",  "20",            "--tree-heartbeat-misses", "1"};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->node_name, "from-flags");
  EXPECT_EQ(options->listen_address, "[::1]:7500");
  EXPECT_EQ(options->peer_token_file, "/flag/token");
  EXPECT_EQ(options->fault_rules_file, "/flag/rules");
  EXPECT_EQ(options->fault_tree_fan_out, 2u);
  EXPECT_EQ(options->tree_heartbeat_ms, 20u);
  EXPECT_EQ(options->tree_heartbeat_misses, 1u);

  // What the flags leave alone comes from the file.
  const char* some[] = {"nodekeeperd", "--config", path.c_str(), "--tree-heartbeat-ms", "30"};
  auto mixed = DaemonOptions::fromCommandLine(some);
  ASSERT_TRUE(mixed.ok()) << mixed.error().message;
  EXPECT_EQ(mixed->tree_heartbeat_ms, 30u);
  EXPECT_EQ(mixed->node_name, "from-file");
  EXPECT_EQ(mixed->listen_address, "10.0.0.1:7400");
  EXPECT_EQ(mixed->peer_token_file, "/file/token");
  EXPECT_EQ(mixed->fault_tree_fan_out, 16u);
  EXPECT_EQ(mixed->tree_heartbeat_misses, 10u);
}

TEST(DaemonOptions, RejectsBadNodeNames) {
  std::string space = flagRefusal({"--node-name", "node 7"});
  EXPECT_TRUE(contains(space, "--node-name 'node 7' contains a space")) << space;
  EXPECT_TRUE(contains(space, "1 to 63 characters of A-Z, a-z, 0-9, '.', '_' and '-'")) << space;
  std::string slash = flagRefusal({"--node-name", "a/b"});
  EXPECT_TRUE(contains(slash, "--node-name 'a/b' contains '/'")) << slash;
  std::string control = flagRefusal({"--node-name", "a\tb"});
  EXPECT_TRUE(contains(control, "'a\\x09b' contains '\\x09'")) << control;
  std::string long_name(64, 'n');
  std::string too_long = flagRefusal({"--node-name", long_name.c_str()});
  EXPECT_TRUE(contains(too_long, "--node-name '" + long_name + "' is 64 bytes long")) << too_long;
  EXPECT_TRUE(contains(flagRefusal({"--node-name="}), "--node-name needs a value"));
  EXPECT_EQ(flagRefusal({"--node-name", std::string(63, 'n').c_str()}), "(accepted)");

  std::string in_file = fileRefusal("\nnode_name = \"node 7\"\n");
  EXPECT_TRUE(contains(in_file, "t.toml:2")) << in_file;
  EXPECT_TRUE(contains(in_file, "node_name 'node 7' contains a space")) << in_file;
  std::string empty = fileRefusal("node_name = \"\"\n");
  EXPECT_TRUE(contains(empty, "'node_name' must not be empty")) << empty;
  std::string not_string = fileRefusal("node_name = 7\n");
  EXPECT_TRUE(contains(not_string, "'node_name' must be a string")) << not_string;
}

TEST(DaemonOptions, RejectsBadListenAddresses) {
  struct Case {
    const char* address;
    const char* complaint;
  };
  const Case cases[] = {
      {"10.0.0.1", "'10.0.0.1': no port"},
      {"10.0.0.1:", "'10.0.0.1:': no port"},
      {":7400", "':7400': no host"},
      {"10.0.0.1:0", "port 0 is not allowed: peers must know the port"},
      {"10.0.0.1:65536", "port 65536 is above 65535"},
      {"10.0.0.1:99999999999", "port 99999999999 is above 65535"},
      {"10.0.0.1:http", "port 'http' is not a number"},
      {"10.0.0.1:-1", "port '-1' is not a number"},
      {"10.0.0.1:74 00", "port '74 00' is not a number"},
      {"10.0.0.256:7400", "'10.0.0.256' is not an IPv4 address"},
      {"10.0.0:7400", "'10.0.0' is not an IPv4 address"},
      {"::1:7400", "an IPv6 address must be in brackets"},
      {"[::1:7400", "no ']' closes the IPv6 address"},
      {"[::1]7400", "':' must follow the ']'"},
      {"[::1]", "'[::1]': no port"},
      {"[10.0.0.1]:7400", "'10.0.0.1' is not an IPv6 address"},
      {"[fd00::zz]:7400", "'fd00::zz' is not an IPv6 address"},
      {"node_7:7400", "'node_7' is not a host name"},
      {"-node:7400", "'-node' is not a host name"},
      {"node..cluster:7400", "'node..cluster' is not a host name"},
  };
  for (const auto& c : cases) {
    std::string flag = flagRefusal({"--listen", c.address, "--peer-token", "/t"});
    EXPECT_TRUE(contains(flag, std::string("--listen '") + c.address + "'")) << flag;
    EXPECT_TRUE(contains(flag, c.complaint)) << c.address << ": " << flag;
    EXPECT_TRUE(contains(flag, "expected HOST:PORT")) << flag;
    std::string key = fileRefusal(std::string("listen = \"") + c.address + "\"\n");
    EXPECT_TRUE(contains(key, std::string("t.toml:1:10: listen '") + c.address + "'")) << key;
    EXPECT_TRUE(contains(key, c.complaint)) << c.address << ": " << key;
    EXPECT_TRUE(contains(key, "expected HOST:PORT")) << key;
  }
  for (const char* good : {"10.1.0.7:7400", "0.0.0.0:1", "[::]:65535", "[fd00::7]:7400", "[::ffff:10.0.0.1]:7400",
                           "node007:7400", "node-7.cluster.example:7400", "localhost:7400"}) {
    EXPECT_EQ(flagRefusal({"--listen", good, "--peer-token", "/t"}), "(accepted)") << good;
    EXPECT_EQ(fileRefusal(std::string("listen = \"") + good + "\"\n"), "(accepted)") << good;
  }
}

TEST(DaemonOptions, RejectsFaultTreeNumbersOutOfRange) {
  struct Case {
    const char* flag;
    const char* key;
    const char* low;
    const char* high;
    const char* range;
  };
  const Case cases[] = {
      {"--fault-tree-fan-out", "fault_tree_fan_out", "0", "65", "between 1 and 64"},
      {"--tree-heartbeat-ms", "tree_heartbeat_ms", "9", "60001", "between 10 and 60000"},
      {"--tree-heartbeat-misses", "tree_heartbeat_misses", "0", "101", "between 1 and 100"},
  };
  for (const auto& c : cases) {
    for (const char* bad : {c.low, c.high, "many"}) {
      std::string flag = flagRefusal({c.flag, bad});
      EXPECT_EQ(flag, std::string(c.flag) + " must be a number " + c.range + ", not '" + bad + "'");
    }
    for (const char* bad : {c.low, c.high}) {
      std::string key = fileRefusal(std::string(c.key) + " = " + bad + "\n");
      EXPECT_TRUE(contains(key, std::string(c.key) + " must be " + c.range + ", not " + bad)) << key;
    }
    std::string type = fileRefusal(std::string(c.key) + " = \"4\"\n");
    EXPECT_TRUE(contains(type, std::string("'") + c.key + "' must be an integer")) << type;
  }
  EXPECT_EQ(
      flagRefusal({"--fault-tree-fan-out", "1", "--tree-heartbeat-ms", "60000", "--tree-heartbeat-misses", "100"}),
      "(accepted)");
}

TEST(DaemonOptions, ListenNeedsAPeerToken) {
  EXPECT_EQ(flagRefusal({"--listen", "10.0.0.1:7400"}),
            "--listen needs --peer-token FILE or mutual TLS (--peer-cert, --peer-key, --peer-ca): peers must "
            "authenticate");
  // A token without --listen: the daemon still sends it to peers.
  EXPECT_EQ(flagRefusal({"--peer-token", "/etc/nk/token"}), "(accepted)");
  EXPECT_EQ(flagRefusal({"--listen", "10.0.0.1:7400", "--peer-token", "/etc/nk/token"}), "(accepted)");
  EXPECT_TRUE(contains(flagRefusal({"--peer-token="}), "--peer-token needs a value"));

  // The same from the config file, or half from each.
  TempConfig listen_only("listen = \"10.0.0.1:7400\"\n");
  std::string path = listen_only.path();
  const char* no_token[] = {"nodekeeperd", "--config", path.c_str()};
  auto refused = DaemonOptions::fromCommandLine(no_token);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "listen in " + path +
                " needs peer_token there, --peer-token FILE or mutual TLS (peer_cert, peer_key, peer_ca): peers must "
                "authenticate");
  const char* token_flag[] = {"nodekeeperd", "--config", path.c_str(), "--peer-token", "/t"};
  EXPECT_TRUE(DaemonOptions::fromCommandLine(token_flag).ok());
  TempConfig token_only("peer_token = \"/t\"\n");
  std::string token_path = token_only.path();
  const char* listen_flag[] = {"nodekeeperd", "--config", token_path.c_str(), "--listen", "10.0.0.1:7400"};
  EXPECT_TRUE(DaemonOptions::fromCommandLine(listen_flag).ok());
}

TEST(DaemonOptions, HelpExplainsTheFaultTreeFlags) {
  std::string help = DaemonOptions::helpText();
  EXPECT_TRUE(contains(help, "Fault localisation tree:"));
  for (const char* flag : {"--node-name NAME", "--listen ADDR:PORT", "--peer-token FILE", "--fault-rules FILE",
                           "--fault-tree-fan-out N", "--tree-heartbeat-ms N", "--tree-heartbeat-misses N"})
    EXPECT_TRUE(contains(help, flag)) << flag;
}

TEST(DaemonOptions, RecordingQuotasFromFileAndFlags) {
  DaemonOptions defaults;
  EXPECT_EQ(defaults.recording_limits.per_user_bytes, 2ull << 30);
  EXPECT_EQ(defaults.recording_limits.total_bytes, 10ull << 30);
  EXPECT_EQ(defaults.recording_limits.max_age, std::chrono::hours(24 * 7));
  TempConfig file("recording_quota_per_user = \"512MiB\"\nrecording_quota_total = 4294967296\n"
                  "recording_max_age_days = 30\n");
  std::string path = file.path();
  const char* from_file[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(from_file);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->recording_limits.per_user_bytes, 512ull << 20);
  EXPECT_EQ(options->recording_limits.total_bytes, 4ull << 30);
  EXPECT_EQ(options->recording_limits.max_age, std::chrono::hours(24 * 30));
  const char* flags[] = {"nodekeeperd", "--config", path.c_str(), "--recording-quota-per-user", "3M",
                         "--recording-quota-total=1T", "--recording-max-age-days", "1"};
  auto over = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(over->recording_limits.per_user_bytes, 3ull << 20);
  EXPECT_EQ(over->recording_limits.total_bytes, 1ull << 40);
  EXPECT_EQ(over->recording_limits.max_age, std::chrono::hours(24));
}

TEST(DaemonOptions, RejectsBadRecordingQuotas) {
  const std::string expected =
      "; expected a size from 1 MiB to 1024 TiB: a number of bytes, or with K, M, G, T (or KiB, MiB, GiB, TiB), "
      "e.g. 2GiB or 512M";
  EXPECT_EQ(flagRefusal({"--recording-quota-per-user", "2GB"}),
            "--recording-quota-per-user '2GB': unknown unit 'GB'" + expected);
  EXPECT_EQ(flagRefusal({"--recording-quota-total", "1000K"}), "--recording-quota-total '1000K' is too small" + expected);
  EXPECT_EQ(flagRefusal({"--recording-quota-total", "1025T"}), "--recording-quota-total '1025T' is too large" + expected);
  EXPECT_EQ(flagRefusal({"--recording-quota-total", "99999999999999999999999"}),
            "--recording-quota-total '99999999999999999999999' is too large" + expected);
  EXPECT_EQ(flagRefusal({"--recording-quota-per-user", "-1G"}),
            "--recording-quota-per-user '-1G' is not a size" + expected);
  EXPECT_EQ(flagRefusal({"--recording-quota-per-user", "lots"}),
            "--recording-quota-per-user 'lots' is not a size" + expected);
  EXPECT_EQ(flagRefusal({"--recording-max-age-days", "0"}),
            "--recording-max-age-days must be a number between 1 and 3650, not '0'");
  EXPECT_EQ(flagRefusal({"--recording-quota-per-user", "1MiB", "--recording-quota-total", "1024TiB"}), "(accepted)");
  std::string key = fileRefusal("recording_quota_total = \"ten gigs\"\n");
  EXPECT_TRUE(contains(key, "t.toml:1:25: recording_quota_total 'ten gigs' is not a size")) << key;
  std::string small = fileRefusal("recording_quota_per_user = 1024\n");
  EXPECT_TRUE(contains(small, "recording_quota_per_user '1024' is too small")) << small;
  std::string type = fileRefusal("recording_quota_per_user = 2.5\n");
  EXPECT_TRUE(contains(type, "recording_quota_per_user must be a size such as \"2GiB\" or a number of bytes")) << type;
  std::string age = fileRefusal("recording_max_age_days = 4000\n");
  EXPECT_TRUE(contains(age, "recording_max_age_days must be between 1 and 3650, not 4000")) << age;
}

// Mutual TLS between peers: three files, all or none, from the config file,
// the flags or both; with them, --listen needs no token.
TEST(DaemonConfig, PeerTlsKeys) {
  auto config = DaemonConfig::parse("peer_cert = \"/etc/nk/n1.pem\"\npeer_key = \"/etc/nk/n1.key\"\n"
                                    "peer_ca = \"/etc/nk/ca.pem\"\n",
                                    "t.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(*config->peer_cert, "/etc/nk/n1.pem");
  EXPECT_EQ(*config->peer_key, "/etc/nk/n1.key");
  EXPECT_EQ(*config->peer_ca, "/etc/nk/ca.pem");
  for (const char* key : {"peer_cert", "peer_key", "peer_ca"}) {
    EXPECT_TRUE(contains(fileRefusal(std::string(key) + " = 7\n"), std::string("'") + key + "' must be a string"));
    EXPECT_TRUE(contains(fileRefusal(std::string(key) + " = \"\"\n"), std::string("'") + key + "' must not be empty"));
  }
  EXPECT_TRUE(contains(fileRefusal("peer_crt = \"/x\"\n"), "peer_cert, peer_key, peer_ca, connections_per_user, connections_total, streams_per_user, "
                                                                  "streams_total, stream_messages_per_second, "
                                                                  "max_message_bytes, task_graph_tasks, metrics_port)"));
  DaemonOptions defaults;
  EXPECT_FALSE(defaults.peerTls());
}

TEST(DaemonOptions, PeerTlsFlagsAndFileTogether) {
  const char* flags[] = {"nodekeeperd", "--config", "/dev/null", "--peer-cert", "/f/n1.pem", "--peer-key",
                         "/f/n1.key",   "--peer-ca", "/f/ca.pem"};
  auto options = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->peerTls());
  EXPECT_EQ(options->peer_cert_file, "/f/n1.pem");
  EXPECT_EQ(options->peer_key_file, "/f/n1.key");
  EXPECT_EQ(options->peer_ca_file, "/f/ca.pem");

  // Half from the file, half from the flags; a flag beats the file.
  TempConfig file("peer_cert = \"/c/n1.pem\"\npeer_key = \"/c/n1.key\"\npeer_ca = \"/c/ca.pem\"\n");
  std::string path = file.path();
  const char* mixed[] = {"nodekeeperd", "--config", path.c_str(), "--peer-key", "/f/other.key"};
  auto merged = DaemonOptions::fromCommandLine(mixed);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->peer_cert_file, "/c/n1.pem");
  EXPECT_EQ(merged->peer_key_file, "/f/other.key");
  EXPECT_EQ(merged->peer_ca_file, "/c/ca.pem");
}

TEST(DaemonOptions, PeerTlsNeedsAllThreeFiles) {
  const std::string prefix = "mutual TLS needs this node's certificate, its key and the peers' CA together; missing ";
  EXPECT_EQ(flagRefusal({"--peer-cert", "/c.pem"}), prefix + "--peer-key (peer_key), --peer-ca (peer_ca)");
  EXPECT_EQ(flagRefusal({"--peer-cert", "/c.pem", "--peer-key", "/k"}), prefix + "--peer-ca (peer_ca)");
  EXPECT_EQ(flagRefusal({"--peer-ca", "/ca.pem"}), prefix + "--peer-cert (peer_cert), --peer-key (peer_key)");
  TempConfig key_only("peer_key = \"/k\"\n");
  std::string path = key_only.path();
  const char* from_file[] = {"nodekeeperd", "--config", path.c_str()};
  auto refused = DaemonOptions::fromCommandLine(from_file);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, prefix + "--peer-cert (peer_cert), --peer-ca (peer_ca)");
  for (const char* flag : {"--peer-cert", "--peer-key", "--peer-ca"})
    EXPECT_EQ(flagRefusal({flag}), std::string(flag) + " needs a value");
}

TEST(DaemonOptions, ListenOverMutualTlsNeedsNoToken) {
  EXPECT_EQ(flagRefusal({"--listen", "10.0.0.1:7400", "--peer-cert", "/c.pem", "--peer-key", "/k", "--peer-ca",
                         "/ca.pem"}),
            "(accepted)");
  // The token may still be asked for inside TLS.
  EXPECT_EQ(flagRefusal({"--listen", "10.0.0.1:7400", "--peer-token", "/t", "--peer-cert", "/c.pem", "--peer-key",
                         "/k", "--peer-ca", "/ca.pem"}),
            "(accepted)");
  // Half a TLS setting is no authentication.
  EXPECT_TRUE(contains(flagRefusal({"--listen", "10.0.0.1:7400", "--peer-cert", "/c.pem"}), "missing --peer-key"));
}

TEST(DaemonOptions, HelpExplainsThePeerTlsFlags) {
  std::string help = DaemonOptions::helpText();
  EXPECT_TRUE(contains(help, "Mutual TLS between peer daemons:"));
  for (const char* flag : {"--peer-cert FILE", "--peer-key FILE", "--peer-ca FILE"})
    EXPECT_TRUE(contains(help, flag)) << flag;
}

// Unix socket connections per user and in all: from the file, over by the
// flags, in their ranges, the per-user one no more than the total.
TEST(DaemonOptions, ConnectionLimitsFromFileAndFlags) {
  DaemonOptions defaults;
  EXPECT_EQ(defaults.connection_limits.per_user, 64u);
  EXPECT_EQ(defaults.connection_limits.total, 1024u);
  TempConfig file("connections_per_user = 8\nconnections_total = 100\n");
  std::string path = file.path();
  const char* from_file[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(from_file);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->connection_limits.per_user, 8u);
  EXPECT_EQ(options->connection_limits.total, 100u);
  const char* flags[] = {"nodekeeperd", "--config", path.c_str(), "--connections-per-user", "20",
                         "--connections-total=5000"};
  auto over = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(over->connection_limits.per_user, 20u);
  EXPECT_EQ(over->connection_limits.total, 5000u);
  EXPECT_TRUE(contains(DaemonOptions::helpText(), "--connections-per-user N"));
  EXPECT_TRUE(contains(DaemonOptions::helpText(), "--connections-total N"));
}

TEST(DaemonOptions, RejectsBadConnectionLimits) {
  EXPECT_EQ(flagRefusal({"--connections-per-user", "0"}),
            "--connections-per-user must be a number between 1 and 65536, not '0'");
  EXPECT_EQ(flagRefusal({"--connections-total", "many"}),
            "--connections-total must be a number between 1 and 1048576, not 'many'");
  EXPECT_EQ(flagRefusal({"--connections-per-user", "100", "--connections-total", "50"}),
            "--connections-per-user (connections_per_user) 100 is more than --connections-total (connections_total) 50");
  EXPECT_EQ(flagRefusal({"--connections-per-user", "65536", "--connections-total", "1048576"}), "(accepted)");
  std::string zero = fileRefusal("connections_total = 0\n");
  EXPECT_TRUE(contains(zero, "connections_total must be between 1 and 1048576, not 0")) << zero;
  std::string type = fileRefusal("connections_per_user = \"lots\"\n");
  EXPECT_TRUE(contains(type, "'connections_per_user' must be an integer")) << type;
}

}  // namespace
// The live graph's window: a default, the file, a flag over the file, and
// a clear refusal of what is not a task count.
TEST(DaemonOptions, TaskGraphTasksFromFileAndFlags) {
  DaemonOptions defaults;
  EXPECT_EQ(defaults.task_graph_tasks, 1'000'000u);
  TempConfig file("task_graph_tasks = 0\n");
  std::string path = file.path();
  const char* from_file[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(from_file);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->task_graph_tasks, 0u);  // unlimited
  const char* flags[] = {"nodekeeperd", "--config", path.c_str(), "--task-graph-tasks=250000"};
  auto over = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(over->task_graph_tasks, 250'000u);
  EXPECT_EQ(flagRefusal({"--task-graph-tasks", "1M"}),
            "--task-graph-tasks must be a number between 0 and 1000000000, not '1M'");
  EXPECT_EQ(flagRefusal({"--task-graph-tasks", "-1"}),
            "--task-graph-tasks must be a number between 0 and 1000000000, not '-1'");
  EXPECT_EQ(flagRefusal({"--task-graph-tasks", "1000000001"}),
            "--task-graph-tasks must be a number between 0 and 1000000000, not '1000000001'");
  std::string big = fileRefusal("task_graph_tasks = 5000000000\n");
  EXPECT_TRUE(contains(big, "task_graph_tasks must be between 0 and 1000000000, not 5000000000")) << big;
  std::string type = fileRefusal("task_graph_tasks = \"many\"\n");
  EXPECT_TRUE(contains(type, "'task_graph_tasks' must be an integer")) << type;
}

// Prometheus metrics: off by default, a port from the file or a flag (0: any
// free one), and a refusal that names the key or the flag.
TEST(DaemonOptions, MetricsPortFromFileAndFlags) {
  DaemonOptions defaults;
  EXPECT_FALSE(defaults.metrics_port.has_value());
  TempConfig file("metrics_port = 9464\n");
  std::string path = file.path();
  const char* from_file[] = {"nodekeeperd", "--config", path.c_str()};
  auto options = DaemonOptions::fromCommandLine(from_file);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->metrics_port, std::optional<uint16_t>(9464));
  const char* flags[] = {"nodekeeperd", "--config", path.c_str(), "--metrics-port=0"};
  auto over = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(over->metrics_port, std::optional<uint16_t>(0));
  EXPECT_EQ(flagRefusal({"--metrics-port", "65536"}), "--metrics-port must be a number between 0 and 65535, not '65536'");
  EXPECT_EQ(flagRefusal({"--metrics-port", "http"}), "--metrics-port must be a number between 0 and 65535, not 'http'");
  std::string big = fileRefusal("metrics_port = 70000\n");
  EXPECT_TRUE(contains(big, "metrics_port must be between 0 and 65535, not 70000")) << big;
  std::string type = fileRefusal("metrics_port = \"9464\"\n");
  EXPECT_TRUE(contains(type, "'metrics_port' must be an integer")) << type;
}

}  // namespace nk
