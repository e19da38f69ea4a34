#include "daemon_flag_table.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nk {
namespace {

using Flag = DaemonFlagTable::Flag;
using Value = DaemonFlagTable::Value;

Result<DaemonFlagTable::Parsed> parse(std::vector<std::string> words) {
  words.insert(words.begin(), "nodekeeperd");
  std::vector<const char*> args;
  for (const auto& word : words) args.push_back(word.c_str());
  return DaemonFlagTable::parse(args);
}

std::string refusal(std::vector<std::string> words) {
  auto parsed = parse(std::move(words));
  return parsed.ok() ? "(accepted)" : parsed.error().message;
}

// Every setting a command line can make, in one string, to compare two.
std::string describe(const DaemonFlagTable::Parsed& parsed) {
  std::ostringstream out;
  auto field = [&](const char* key, const auto& value) {
    out << key << "=";
    if (value) out << *value;
    else out << "(unset)";
    out << ";";
  };
  const DaemonConfig& c = parsed.config;
  field("config", parsed.config_path);
  field("socket", c.socket);
  field("state_dir", c.state_dir);
  field("emulate", c.emulate);
  field("emulate_ignore_host_load", c.emulate_ignore_host_load);
  field("profile", c.profile);
  field("sysfs_root", c.sysfs_root);
  field("log_level", c.log_level);
  field("telemetry_interval_ms", c.telemetry_interval_ms);
  field("admin_group", c.admin_group);
  field("dct_interval_ms", c.dct_interval_ms);
  field("debug_grace_s", c.debug_grace_s);
  field("dvfs_per_dct", c.dvfs_per_dct);
  field("node_name", c.node_name);
  field("listen", c.listen);
  field("peer_token", c.peer_token);
  field("fault_rules", c.fault_rules);
  field("fault_tree_fan_out", c.fault_tree_fan_out);
  field("tree_heartbeat_ms", c.tree_heartbeat_ms);
  field("tree_heartbeat_misses", c.tree_heartbeat_misses);
  field("recording_quota_per_user", c.recording_quota_per_user);
  field("recording_quota_total", c.recording_quota_total);
  field("recording_max_age_days", c.recording_max_age_days);
  field("peer_cert", c.peer_cert);
  field("peer_key", c.peer_key);
  field("peer_ca", c.peer_ca);
  field("connections_per_user", c.connections_per_user);
  field("connections_total", c.connections_total);
  field("streams_per_user", c.streams_per_user);
  field("streams_total", c.streams_total);
  field("stream_messages_per_second", c.stream_messages_per_second);
  field("max_message_bytes", c.max_message_bytes);
  field("task_graph_tasks", c.task_graph_tasks);
  field("metrics_port", c.metrics_port);
  out << "help=" << parsed.show_help << ";version=" << parsed.show_version;
  return out.str();
}

// Where the help's texts start: the column of "this help" in "  -h, --help ...".
constexpr size_t kHelpTextColumn = 25;

// A value each flag accepts.
std::string goodValueFor(const Flag& flag) {
  if (flag.range) return std::to_string(flag.range->high);
  if (flag.name == "--log-level") return "debug";
  if (flag.name == "--listen") return "10.0.0.1:7400";
  if (flag.name.starts_with("--recording-quota")) return "3GiB";
  return "node1";
}

TEST(DaemonFlagTable, NamesAreUniqueLongFlags) {
  std::set<std::string_view> names;
  for (const Flag& flag : DaemonFlagTable::flags()) {
    EXPECT_TRUE(flag.name.starts_with("--")) << flag.name;
    EXPECT_TRUE(names.insert(flag.name).second) << flag.name << " twice";
    if (!flag.short_name.empty()) {
      EXPECT_TRUE(names.insert(flag.short_name).second) << flag.short_name << " twice";
    }
    EXPECT_EQ(DaemonFlagTable::find(flag.name), &flag);
    EXPECT_FALSE(flag.help.empty()) << flag.name;
    EXPECT_TRUE(flag.set) << flag.name;
  }
  EXPECT_GE(names.size(), 20u);
  EXPECT_EQ(DaemonFlagTable::find("--frobnicate"), nullptr);
}

TEST(DaemonFlagTable, EveryFlagIsInTheHelpWithItsText) {
  const std::string help = DaemonFlagTable::helpText();
  for (const Flag& flag : DaemonFlagTable::flags()) {
    std::string label = "  ";
    if (!flag.short_name.empty()) label += std::string(flag.short_name) + ", ";
    label += flag.name;
    if (flag.value == Value::kRequired) label += " " + std::string(flag.value_name);
    if (flag.value == Value::kOptional) label += " [" + std::string(flag.value_name) + "]";
    size_t at = help.find("\n" + label + " ");
    if (at == std::string::npos) at = help.find("\n" + label + "\n");
    ASSERT_NE(at, std::string::npos) << label << " is not in the help:\n" << help;
    // Each line of the flag's text, in order after its label; the lines
    // after the first one start in the help's text column.
    std::istringstream lines{std::string(flag.help)};
    bool first = true;
    for (std::string line; std::getline(lines, line); first = false) {
      std::string expected = (first ? "" : "\n" + std::string(kHelpTextColumn, ' ')) + line + "\n";
      size_t found = help.find(expected, at);
      ASSERT_NE(found, std::string::npos) << flag.name << ": '" << expected << "' in\n" << help;
      at = found;
    }
    EXPECT_NE(help.find("\n" + std::string(flag.section) + ":\n"), std::string::npos) << flag.section;
  }
}

TEST(DaemonFlagTable, EveryValueFlagRefusesAMissingValue) {
  for (const Flag& flag : DaemonFlagTable::flags()) {
    if (flag.value != Value::kRequired) continue;
    const std::string name(flag.name);
    const std::string expected = name + " needs a value";
    EXPECT_EQ(refusal({name}), expected);
    EXPECT_EQ(refusal({name + "="}), expected);
    EXPECT_EQ(refusal({name, "--version"}), expected);
  }
}

TEST(DaemonFlagTable, NumericFlagsKeepToTheirRange) {
  int numeric = 0;
  for (const Flag& flag : DaemonFlagTable::flags()) {
    if (!flag.range) continue;
    ++numeric;
    const std::string name(flag.name);
    const auto [low, high] = *flag.range;
    EXPECT_EQ(refusal({name, std::to_string(low)}), "(accepted)") << name;
    EXPECT_EQ(refusal({name, std::to_string(high)}), "(accepted)") << name;
    // Init-captures: clang 14 (the sanitizer build) cannot capture structured bindings.
    auto message = [&, low = low, high = high](const std::string& given) {
      return name + " must be a number between " + std::to_string(low) + " and " + std::to_string(high) + ", not '" +
             given + "'";
    };
    for (const std::string& bad : {std::to_string(low - 1), std::to_string(uint64_t{high} + 1), std::string("1e3"),
                                   std::string("-1"), std::string(" 5")})
      EXPECT_EQ(refusal({name, bad}), message(bad));
  }
  EXPECT_EQ(numeric, 16);
}

TEST(DaemonFlagTable, EqualsFormSetsWhatTheTwoWordFormSets) {
  for (const Flag& flag : DaemonFlagTable::flags()) {
    if (flag.value != Value::kRequired) continue;
    const std::string name(flag.name);
    const std::string value = goodValueFor(flag);
    auto two_words = parse({name, value});
    auto one_word = parse({name + "=" + value});
    ASSERT_TRUE(two_words.ok()) << name << ": " << two_words.error().message;
    ASSERT_TRUE(one_word.ok()) << name << ": " << one_word.error().message;
    EXPECT_EQ(describe(*one_word), describe(*two_words)) << name;
    EXPECT_NE(describe(*one_word), describe(DaemonFlagTable::Parsed{})) << name << " set nothing";
  }
}

TEST(DaemonFlagTable, AFlagGivenTwiceKeepsTheLastValue) {
  auto parsed = parse({"--socket", "/a.sock", "--tree-heartbeat-ms=20", "--socket=/b.sock", "--tree-heartbeat-ms",
                       "30"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->config.socket, "/b.sock");
  EXPECT_EQ(parsed->config.tree_heartbeat_ms, 30u);
  // A second --emulate without a profile keeps the first one's.
  auto emulate = parse({"--emulate", "laptop", "--emulate"});
  ASSERT_TRUE(emulate.ok()) << emulate.error().message;
  EXPECT_EQ(emulate->config.emulate, true);
  EXPECT_EQ(emulate->config.profile, "laptop");
  // The bad one of two is refused even if the good one comes last.
  EXPECT_EQ(refusal({"--dvfs-per-dct", "0", "--dvfs-per-dct", "5"}),
            "--dvfs-per-dct must be a number between 1 and 100, not '0'");
}

TEST(DaemonFlagTable, OptionalValues) {
  auto bare = parse({"--emulate", "--socket", "/s"});
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(bare->config.emulate, true);
  EXPECT_FALSE(bare->config.profile.has_value());
  EXPECT_EQ(bare->config.socket, "/s");
  auto inline_profile = parse({"--emulate=x.toml"});
  ASSERT_TRUE(inline_profile.ok());
  EXPECT_EQ(inline_profile->config.profile, "x.toml");
  // "=" with nothing after it names the default profile.
  auto empty_profile = parse({"--emulate="});
  ASSERT_TRUE(empty_profile.ok());
  EXPECT_EQ(empty_profile->config.profile, "");
  // A word starting with '-' is never taken as the profile.
  EXPECT_EQ(refusal({"--emulate", "-x"}), "unknown option '-x' (see nodekeeperd --help)");
}

TEST(DaemonFlagTable, SwitchesAndUnknownWords) {
  for (const char* help : {"-h", "--help", "--help=ignored"}) {
    auto parsed = parse({help});
    ASSERT_TRUE(parsed.ok()) << help;
    EXPECT_TRUE(parsed->show_help) << help;
    EXPECT_FALSE(parsed->show_version) << help;
  }
  auto version = parse({"--version"});
  ASSERT_TRUE(version.ok());
  EXPECT_TRUE(version->show_version);
  // Only long flags take "=value"; the whole word is named.
  EXPECT_EQ(refusal({"-h=1"}), "unknown option '-h=1' (see nodekeeperd --help)");
  EXPECT_EQ(refusal({"--frob=3"}), "unknown option '--frob=3' (see nodekeeperd --help)");
  EXPECT_EQ(refusal({"socket"}), "unknown option 'socket' (see nodekeeperd --help)");
  // A value may start with a single '-'; "--" starts the next flag.
  auto dash = parse({"--socket", "-odd.sock"});
  ASSERT_TRUE(dash.ok());
  EXPECT_EQ(dash->config.socket, "-odd.sock");
}

}  // namespace
}  // namespace nk
