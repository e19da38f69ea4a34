#include "cli/command_line.h"

#include <gtest/gtest.h>

#include "cli/command_table.h"

namespace nk::cli {
namespace {

Result<Invocation> parse(std::vector<std::string> args) { return CommandLine::parse(args); }

std::string errorOf(std::vector<std::string> args) {
  auto invocation = parse(std::move(args));
  if (invocation.ok()) return "(parsed)";
  return invocation.error().message;
}

TEST(CommandLine, StatusWithGlobalOptionsBeforeAndAfter) {
  auto before = parse({"--socket", "/tmp/nk.sock", "--json", "status"});
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(before->action, Invocation::Action::kRun);
  ASSERT_NE(before->command, nullptr);
  EXPECT_EQ(before->command->id, CommandId::kStatus);
  EXPECT_EQ(before->global.socket, "/tmp/nk.sock");
  EXPECT_TRUE(before->global.json);

  auto after = parse({"status", "--json", "--timeout=2.5"});
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_TRUE(after->global.json);
  EXPECT_DOUBLE_EQ(after->global.timeout_s, 2.5);
}

TEST(CommandLine, DefaultTimeoutIsFiveSeconds) {
  auto invocation = parse({"whoami"});
  ASSERT_TRUE(invocation.ok());
  EXPECT_DOUBLE_EQ(invocation->global.timeout_s, 5);
  EXPECT_FALSE(invocation->global.json);
  EXPECT_FALSE(invocation->global.socket.has_value());
}

TEST(CommandLine, NestedCommandsWithOptionsAndPositionals) {
  auto freq = parse({"freq", "set", "--cpu", "0-3", "--max", "2.0GHz"});
  ASSERT_TRUE(freq.ok()) << freq.error().message;
  EXPECT_EQ(freq->command->id, CommandId::kFreqSet);
  EXPECT_EQ(freq->options.value("cpu"), "0-3");
  EXPECT_EQ(freq->options.value("max"), "2.0GHz");

  auto cap = parse({"power", "cap", "set", "45W", "--package", "1"});
  ASSERT_TRUE(cap.ok()) << cap.error().message;
  EXPECT_EQ(cap->command->id, CommandId::kPowerCapSet);
  EXPECT_EQ(cap->positionals, (std::vector<std::string>{"45W"}));
  EXPECT_EQ(cap->options.value("package"), "1");

  auto disable = parse({"power", "cap", "disable"});
  ASSERT_TRUE(disable.ok());
  EXPECT_EQ(disable->command->id, CommandId::kPowerCapDisable);

  auto governor = parse({"governor", "set", "performance", "--cpu=2"});
  ASSERT_TRUE(governor.ok());
  EXPECT_EQ(governor->command->id, CommandId::kGovernorSet);
  EXPECT_EQ(governor->positionals, (std::vector<std::string>{"performance"}));

  auto policy = parse({"policy", "set", "thermal-aware"});
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->command->id, CommandId::kPolicySet);
}

TEST(CommandLine, GlobalOptionsDoNotLeakIntoCommandOptions) {
  auto invocation = parse({"freq", "get", "--json", "--cpu", "1"});
  ASSERT_TRUE(invocation.ok());
  EXPECT_TRUE(invocation->global.json);
  EXPECT_FALSE(invocation->options.has("json"));
  EXPECT_TRUE(invocation->options.has("cpu"));
}

TEST(CommandLine, Help) {
  auto main_help = parse({"--help"});
  ASSERT_TRUE(main_help.ok());
  EXPECT_EQ(main_help->action, Invocation::Action::kHelp);
  EXPECT_TRUE(main_help->help_topic.empty());

  auto group = parse({"freq", "--help"});
  ASSERT_TRUE(group.ok());
  EXPECT_EQ(group->action, Invocation::Action::kHelp);
  EXPECT_EQ(group->help_topic, (std::vector<std::string>{"freq"}));

  // Help wins over a missing positional.
  auto command = parse({"governor", "set", "-h"});
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(command->action, Invocation::Action::kHelp);
  EXPECT_EQ(command->help_topic, (std::vector<std::string>{"governor", "set"}));

  auto help_word = parse({"help", "power", "cap"});
  ASSERT_TRUE(help_word.ok());
  EXPECT_EQ(help_word->action, Invocation::Action::kHelp);
  EXPECT_EQ(help_word->help_topic, (std::vector<std::string>{"power", "cap"}));
}

TEST(CommandLine, Version) {
  auto version = parse({"--version"});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->action, Invocation::Action::kVersion);
}

TEST(CommandLine, ErrorsNameTheProblemAndPointToHelp) {
  EXPECT_EQ(errorOf({}), "missing command; see 'nodekeeper --help'");
  EXPECT_EQ(errorOf({"frobnicate"}), "unknown command 'frobnicate'; see 'nodekeeper --help'");
  EXPECT_EQ(errorOf({"--frob", "status"}), "unknown option '--frob'; see 'nodekeeper --help'");
  EXPECT_EQ(errorOf({"status", "--frob"}), "unknown option '--frob' for 'status'; see 'nodekeeper status --help'");
  EXPECT_EQ(errorOf({"freq"}), "'freq' needs a subcommand: get or set; see 'nodekeeper freq --help'");
  EXPECT_EQ(errorOf({"freq", "up"}),
            "unknown subcommand 'up' for 'freq' (choose get or set); see 'nodekeeper freq --help'");
  EXPECT_EQ(errorOf({"power"}), "'power' needs a subcommand: cap; see 'nodekeeper power --help'");
  EXPECT_EQ(errorOf({"power", "cap"}),
            "'power cap' needs a subcommand: get, set or disable; see 'nodekeeper power cap --help'");
  EXPECT_EQ(errorOf({"governor", "set"}), "missing NAME for 'governor set'; see 'nodekeeper governor set --help'");
  EXPECT_EQ(errorOf({"power", "cap", "set"}),
            "missing LIMIT for 'power cap set'; see 'nodekeeper power cap set --help'");
  EXPECT_EQ(errorOf({"status", "extra"}), "unexpected argument 'extra' for 'status'; see 'nodekeeper status --help'");
  EXPECT_EQ(errorOf({"freq", "set", "--cpu"}),
            "option '--cpu' needs a value (LIST) for 'freq set'; see 'nodekeeper freq set --help'");
  EXPECT_EQ(errorOf({"status", "--json=1"}),
            "option '--json' takes no value for 'status'; see 'nodekeeper status --help'");
  // A command's options are not accepted by another command.
  EXPECT_EQ(errorOf({"status", "--cpu", "1"}),
            "unknown option '--cpu' for 'status'; see 'nodekeeper status --help'");
}

TEST(CommandLine, ValidatesGlobalValues) {
  EXPECT_EQ(errorOf({"--timeout", "abc", "status"}), "--timeout: 'abc' is not a number of seconds; see 'nodekeeper --help'");
  EXPECT_EQ(errorOf({"status", "--timeout", "0"}),
            "--timeout must be more than 0 seconds; see 'nodekeeper status --help'");
  EXPECT_EQ(errorOf({"--socket=", "status"}), "--socket needs a path; see 'nodekeeper --help'");
}

TEST(CommandLine, ErrorsAreOneLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {}, {"x"}, {"freq"}, {"freq", "set", "--bad"}, {"power", "cap", "set"}, {"--timeout=-1", "status"}}) {
    auto invocation = parse(args);
    ASSERT_FALSE(invocation.ok());
    EXPECT_EQ(invocation.error().message.find('\n'), std::string::npos) << invocation.error().message;
  }
}

TEST(CommandLine, SocketPathPrecedence) {
  GlobalOptions global;
  EXPECT_EQ(CommandLine::socketPath(global, nullptr), "/run/nodekeeper/nodekeeperd.sock");
  EXPECT_EQ(CommandLine::socketPath(global, ""), "/run/nodekeeper/nodekeeperd.sock");
  EXPECT_EQ(CommandLine::socketPath(global, "/env.sock"), "/env.sock");
  global.socket = "/flag.sock";
  EXPECT_EQ(CommandLine::socketPath(global, "/env.sock"), "/flag.sock");
}

TEST(CommandTable, HelpTextsMentionEveryCommandAndOption) {
  const CommandTable& table = CommandTable::instance();
  std::string main_help = table.mainHelp();
  for (const auto& command : table.commands()) {
    EXPECT_NE(main_help.find(command.name()), std::string::npos) << command.name();
    std::string help = table.commandHelp(command);
    EXPECT_EQ(help.rfind("usage: nodekeeper", 0), 0u) << help;
    for (const auto& option : command.options) EXPECT_NE(help.find("--" + option.name), std::string::npos);
    EXPECT_NE(help.find("--socket"), std::string::npos);
  }
  std::string freq = table.groupHelp({"freq"});
  EXPECT_NE(freq.find("freq get"), std::string::npos);
  EXPECT_NE(freq.find("freq set"), std::string::npos);
  EXPECT_EQ(freq.find("power cap"), std::string::npos);
}

TEST(CommandLine, AppsCommands) {
  auto apps = parse({"apps", "--json"});
  ASSERT_TRUE(apps.ok()) << apps.error().message;
  ASSERT_NE(apps->command, nullptr);
  EXPECT_EQ(apps->command->id, CommandId::kApps);
  EXPECT_TRUE(apps->global.json);

  auto budget = parse({"budget", "3", "40W"});
  ASSERT_TRUE(budget.ok()) << budget.error().message;
  EXPECT_EQ(budget->command->id, CommandId::kBudget);
  EXPECT_EQ(budget->positionals, (std::vector<std::string>{"3", "40W"}));

  // The node's policy as before; --app selects an app's.
  auto node = parse({"policy", "set", "ondemand"});
  ASSERT_TRUE(node.ok());
  EXPECT_FALSE(node->options.has("app"));
  auto app = parse({"policy", "set", "ondemand", "--app", "7"});
  ASSERT_TRUE(app.ok()) << app.error().message;
  EXPECT_EQ(app->options.value("app"), "7");
  EXPECT_EQ(app->positionals, (std::vector<std::string>{"ondemand"}));
  auto get = parse({"policy", "get", "--app=7", "--json"});
  ASSERT_TRUE(get.ok()) << get.error().message;
  EXPECT_EQ(get->options.value("app"), "7");

  EXPECT_EQ(errorOf({"budget", "3"}), "missing WATTS for 'budget'; see 'nodekeeper budget --help'");
  EXPECT_EQ(errorOf({"budget"}), "missing APP for 'budget'; see 'nodekeeper budget --help'");
  EXPECT_EQ(errorOf({"apps", "--app", "1"}), "unknown option '--app' for 'apps'; see 'nodekeeper apps --help'");
  EXPECT_EQ(errorOf({"policy", "get", "--app"}),
            "option '--app' needs a value (APP) for 'policy get'; see 'nodekeeper policy get --help'");
}

TEST(CommandTable, HelpTextsDescribeTheAppsCommands) {
  const CommandTable& table = CommandTable::instance();
  std::string main_help = table.mainHelp();
  EXPECT_NE(main_help.find("\n  apps "), std::string::npos) << main_help;
  EXPECT_NE(main_help.find("\n  budget "), std::string::npos) << main_help;

  const CommandSpec* budget = table.find({"budget"});
  ASSERT_NE(budget, nullptr);
  std::string budget_help = table.commandHelp(*budget);
  EXPECT_EQ(budget_help.rfind("usage: nodekeeper [OPTIONS] budget APP WATTS\n", 0), 0u) << budget_help;
  EXPECT_NE(budget_help.find("12000mW"), std::string::npos);
  EXPECT_NE(budget_help.find("owner"), std::string::npos);
  EXPECT_NE(budget_help.find("a plain number is W"), std::string::npos);

  const CommandSpec* apps = table.find({"apps"});
  ASSERT_NE(apps, nullptr);
  EXPECT_NE(table.commandHelp(*apps).find("per thread"), std::string::npos);

  for (const auto& path : std::vector<std::vector<std::string>>{{"policy", "get"}, {"policy", "set"}}) {
    const CommandSpec* policy = table.find(path);
    ASSERT_NE(policy, nullptr);
    std::string help = table.commandHelp(*policy);
    EXPECT_NE(help.find("[--app APP]"), std::string::npos) << help;
    EXPECT_NE(help.find("--app APP  "), std::string::npos) << help;
  }
  EXPECT_NE(table.commandHelp(*table.find({"policy", "set"})).find("\"default\""), std::string::npos);
}

TEST(CommandLine, FaultsCommand) {
  auto all = parse({"faults"});
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_NE(all->command, nullptr);
  EXPECT_EQ(all->command->id, CommandId::kFaults);
  EXPECT_FALSE(all->options.has("job"));
  EXPECT_FALSE(all->options.has("watch"));

  auto one = parse({"faults", "--job", "j-42", "--watch", "--json"});
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->options.value("job"), "j-42");
  EXPECT_TRUE(one->options.has("watch"));
  EXPECT_TRUE(one->global.json);

  EXPECT_EQ(errorOf({"faults", "--job"}),
            "option '--job' needs a value (JOB) for 'faults'; see 'nodekeeper faults --help'");
  EXPECT_EQ(errorOf({"faults", "extra"}), "unexpected argument 'extra' for 'faults'; see 'nodekeeper faults --help'");
}

TEST(CommandTable, HelpTextDescribesTheFaultsCommand) {
  const CommandTable& table = CommandTable::instance();
  EXPECT_NE(table.mainHelp().find("\n  faults "), std::string::npos);
  const CommandSpec* faults = table.find({"faults"});
  ASSERT_NE(faults, nullptr);
  std::string help = table.commandHelp(*faults);
  EXPECT_EQ(help.rfind("usage: nodekeeper [OPTIONS] faults [--job JOB] [--watch]\n", 0), 0u) << help;
  for (const char* word : {"rank 0", "takes over", "node_down", "process_hang", "process_crash", "network_degraded",
                           "overheating", "AFTER", "first symptom", "--json"})
    EXPECT_NE(help.find(word), std::string::npos) << word;
  // The description fits a terminal, as the others do.
  const std::string& text = faults->description;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    EXPECT_LE(end - start, 80u) << text.substr(start, end - start);
}

}  // namespace
}  // namespace nk::cli
