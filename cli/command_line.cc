#include "cli/command_line.h"

#include <charconv>
#include <cmath>

#include "cli/command_table.h"

namespace nk::cli {

namespace {

std::string hint(const std::vector<std::string>& topic) {
  std::string command = "nodekeeper";
  for (const auto& word : topic) command += " " + word;
  return "; see '" + command + " --help'";
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size() && separator == ", ") ? " or " : separator;
    out += words[i];
  }
  return out;
}

bool isHelpFlag(const std::string& arg) { return arg == "-h" || arg == "--help"; }

Result<double> parseSeconds(const std::string& text, const std::string& option) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value))
    return invalidArgument("--" + option + ": '" + text + "' is not a number of seconds");
  if (value <= 0) return invalidArgument("--" + option + " must be more than 0 seconds");
  if (value > 86400) return invalidArgument("--" + option + " must be at most 86400 seconds");
  return value;
}

// Copies the global options found in `parsed` into `global`; later
// occurrences override earlier ones.
Status applyGlobals(const ParsedArguments& parsed, GlobalOptions& global, const std::vector<std::string>& topic) {
  if (auto socket = parsed.value("socket")) {
    if (socket->empty()) return invalidArgument("--socket needs a path" + hint(topic));
    global.socket = *socket;
  }
  if (parsed.has("json")) global.json = true;
  if (auto timeout = parsed.value("timeout")) {
    auto seconds = parseSeconds(*timeout, "timeout");
    if (!seconds) return invalidArgument(seconds.error().message + hint(topic));
    global.timeout_s = *seconds;
  }
  return {};
}

}  // namespace

Result<Invocation> CommandLine::parse(const std::vector<std::string>& args) {
  const CommandTable& table = CommandTable::instance();
  Invocation invocation;

  ArgumentParser global_parser(table.globalOptions());
  auto leading = global_parser.parseUntilPositional(args);
  if (!leading) return invalidArgument(leading.error().message + hint({}));
  if (auto status = applyGlobals(*leading, invocation.global, {}); !status) return status.error();

  std::vector<std::string> rest = leading->rest;
  if (!rest.empty() && rest.front() == "--") rest.erase(rest.begin());

  if (rest.empty()) {
    if (leading->has("help")) {
      invocation.action = Invocation::Action::kHelp;
      return invocation;
    }
    if (leading->has("version")) {
      invocation.action = Invocation::Action::kVersion;
      return invocation;
    }
    return invalidArgument("missing command" + hint({}));
  }

  // "nodekeeper help freq set" is the same as "nodekeeper freq set --help".
  bool help_word = rest.front() == "help";
  if (help_word) rest.erase(rest.begin());

  std::vector<std::string> path;
  size_t consumed = 0;
  while (consumed < rest.size() && !rest[consumed].empty() && rest[consumed][0] != '-') {
    std::vector<std::string> longer = path;
    longer.push_back(rest[consumed]);
    if (!table.find(longer) && !table.isGroup(longer)) break;
    // No break at the first match: "tasks stats" extends "tasks".
    path = std::move(longer);
    ++consumed;
  }
  std::vector<std::string> tail(rest.begin() + static_cast<std::ptrdiff_t>(consumed), rest.end());

  if (path.empty()) {
    if (help_word && rest.empty()) {
      invocation.action = Invocation::Action::kHelp;
      return invocation;
    }
    const std::string& word = rest.front();
    if (!word.empty() && word[0] == '-') return invalidArgument("unknown option '" + word + "'" + hint({}));
    return invalidArgument("unknown command '" + word + "'" + hint({}));
  }

  const CommandSpec* command = table.find(path);
  if (command == nullptr) {
    // A group such as "freq" or "power cap": only help makes sense here.
    bool wants_help = help_word;
    for (const auto& arg : tail) wants_help = wants_help || isHelpFlag(arg);
    if (wants_help) {
      invocation.action = Invocation::Action::kHelp;
      invocation.help_topic = path;
      return invocation;
    }
    std::string group;
    for (const auto& word : path) group += (group.empty() ? "" : " ") + word;
    std::string choices = join(table.nextWords(path), ", ");
    if (!tail.empty() && !tail.front().empty() && tail.front()[0] != '-')
      return invalidArgument("unknown subcommand '" + tail.front() + "' for '" + group + "' (choose " + choices + ")" +
                             hint(path));
    return invalidArgument("'" + group + "' needs a subcommand: " + choices + hint(path));
  }

  invocation.command = command;
  if (help_word) {
    invocation.action = Invocation::Action::kHelp;
    invocation.help_topic = path;
    return invocation;
  }

  std::vector<OptionSpec> accepted = command->options;
  accepted.insert(accepted.end(), table.globalOptions().begin(), table.globalOptions().end());
  ArgumentParser command_parser(accepted);
  auto parsed = command_parser.parse(tail);
  if (!parsed) return invalidArgument(parsed.error().message + " for '" + command->name() + "'" + hint(path));

  if (parsed->has("help")) {
    invocation.action = Invocation::Action::kHelp;
    invocation.help_topic = path;
    return invocation;
  }
  if (parsed->has("version")) {
    invocation.action = Invocation::Action::kVersion;
    return invocation;
  }
  if (auto status = applyGlobals(*parsed, invocation.global, path); !status) return status.error();

  if (parsed->positionals.size() < command->positionals.size())
    return invalidArgument("missing " + command->positionals[parsed->positionals.size()] + " for '" +
                           command->name() + "'" + hint(path));
  if (parsed->positionals.size() > command->positionals.size() && !command->variadic)
    return invalidArgument("unexpected argument '" + parsed->positionals[command->positionals.size()] + "' for '" +
                           command->name() + "'" + hint(path));

  invocation.positionals = parsed->positionals;
  invocation.after_separator = parsed->after_separator;
  for (const auto& option : command->options) {
    auto it = parsed->options.find(option.name);
    if (it != parsed->options.end()) invocation.options.options.insert(*it);
  }
  return invocation;
}

std::string CommandLine::socketPath(const GlobalOptions& global, const char* env_value) {
  if (global.socket) return *global.socket;
  if (env_value != nullptr && *env_value != '\0') return env_value;
  return kDefaultSocket;
}

}  // namespace nk::cli
