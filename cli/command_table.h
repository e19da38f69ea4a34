#pragma once

#include <string>
#include <vector>

#include "cli/argument_parser.h"

namespace nk::cli {

enum class CommandId {
  kStatus,
  kWatch,
  kFreqGet,
  kFreqSet,
  kGovernorGet,
  kGovernorSet,
  kPowerCapGet,
  kPowerCapSet,
  kPowerCapDisable,
  kPolicyGet,
  kPolicySet,
  kApps,
  kBudget,
  kTasks,
  kTasksStats,
  kExport,
  kGraph,
  kJobs,
  kJobBegin,
  kJobAttach,
  kJobEnd,
  kSymptoms,
  kFaults,
  kWhoAmI,
  kDebug,
  kUi,
};

struct CommandSpec {
  CommandId id;
  std::vector<std::string> path;         // {"power", "cap", "set"}
  std::vector<std::string> positionals;  // required, in order, e.g. {"LIMIT"}
  std::vector<OptionSpec> options;       // besides the global ones
  std::string summary;                   // one line for the command list
  std::string description;               // the body of its --help
  // More positionals than `positionals` are allowed (a program and its
  // arguments after "--").
  bool variadic = false;

  std::string name() const;  // "power cap set"
};

// Every command the CLI knows, and the help texts built from them. Groups
// ("freq", "power cap") are the path prefixes that are not commands.
class CommandTable {
 public:
  static const CommandTable& instance();

  const std::vector<CommandSpec>& commands() const { return commands_; }
  const std::vector<OptionSpec>& globalOptions() const { return global_options_; }

  const CommandSpec* find(const std::vector<std::string>& path) const;
  // True when some command's path starts with `prefix` (and is longer).
  bool isGroup(const std::vector<std::string>& prefix) const;
  // The next words after `prefix`, in table order, without duplicates.
  std::vector<std::string> nextWords(const std::vector<std::string>& prefix) const;

  std::string mainHelp() const;
  std::string groupHelp(const std::vector<std::string>& prefix) const;
  std::string commandHelp(const CommandSpec& command) const;

 private:
  CommandTable();

  std::vector<OptionSpec> global_options_;
  std::vector<CommandSpec> commands_;
};

}  // namespace nk::cli
