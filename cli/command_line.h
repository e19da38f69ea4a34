#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/argument_parser.h"
#include "base/result.h"

namespace nk::cli {

struct CommandSpec;

struct GlobalOptions {
  std::optional<std::string> socket;  // --socket, if given
  bool json = false;
  double timeout_s = 5;
};

// One parsed command line: what to do, with which options.
struct Invocation {
  enum class Action { kRun, kHelp, kVersion };

  Action action = Action::kRun;
  GlobalOptions global;
  const CommandSpec* command = nullptr;  // kRun; for kHelp, the command asked about (if one)
  std::vector<std::string> help_topic;   // kHelp: group or command words; empty: main help
  std::vector<std::string> positionals;  // the command's positional arguments
  bool after_separator = false;          // they came after "--"
  ParsedArguments options;               // the command's own options
};

// Turns argv into an Invocation. Errors are one line naming the problem and
// pointing to the matching --help.
class CommandLine {
 public:
  static Result<Invocation> parse(const std::vector<std::string>& args);

  static constexpr const char* kDefaultSocket = "/run/nodekeeper/nodekeeperd.sock";
  // --socket, else $NODEKEEPER_SOCKET (pass getenv's result), else the default.
  static std::string socketPath(const GlobalOptions& global, const char* env_value);
};

}  // namespace nk::cli
