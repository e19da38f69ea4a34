#include "cli/argument_parser.h"

#include <utility>

namespace nk::cli {

std::optional<std::string> ParsedArguments::value(const std::string& name) const {
  auto it = options.find(name);
  if (it == options.end()) return std::nullopt;
  return it->second;
}

ArgumentParser::ArgumentParser(std::vector<OptionSpec> options) : options_(std::move(options)) {}

Result<ParsedArguments> ArgumentParser::parse(const std::vector<std::string>& args) const {
  return run(args, false);
}

Result<ParsedArguments> ArgumentParser::parseUntilPositional(const std::vector<std::string>& args) const {
  return run(args, true);
}

const OptionSpec* ArgumentParser::findLong(const std::string& name) const {
  for (const auto& option : options_)
    if (option.name == name) return &option;
  return nullptr;
}

const OptionSpec* ArgumentParser::findShort(char name) const {
  for (const auto& option : options_)
    if (option.short_name != 0 && option.short_name == name) return &option;
  return nullptr;
}

Result<ParsedArguments> ArgumentParser::run(const std::vector<std::string>& args, bool stop_at_positional) const {
  ParsedArguments parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      if (stop_at_positional) {
        parsed.rest.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
        return parsed;
      }
      parsed.after_separator = parsed.positionals.empty() && i + 1 < args.size();
      parsed.positionals.insert(parsed.positionals.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      return parsed;
    }
    // A lone "-" and negative numbers are positionals; no option here is a
    // digit.
    bool looks_numeric = arg.size() > 1 && arg[0] == '-' && arg[1] >= '0' && arg[1] <= '9';
    bool is_long = arg.size() > 2 && arg.compare(0, 2, "--") == 0;
    bool is_short = !is_long && !looks_numeric && arg.size() == 2 && arg[0] == '-' && arg[1] != '-';
    if (!is_long && !is_short) {
      if (arg.size() > 1 && arg[0] == '-' && !looks_numeric) return invalidArgument("unknown option '" + arg + "'");
      if (stop_at_positional) {
        parsed.rest.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
        return parsed;
      }
      parsed.positionals.push_back(arg);
      continue;
    }

    const OptionSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    std::string shown;
    if (is_long) {
      std::string name = arg.substr(2);
      size_t equals = name.find('=');
      if (equals != std::string::npos) {
        inline_value = name.substr(equals + 1);
        name.resize(equals);
      }
      shown = "--" + name;
      spec = findLong(name);
    } else {
      shown = arg;
      spec = findShort(arg[1]);
    }
    if (spec == nullptr) return invalidArgument("unknown option '" + shown + "'");

    if (!spec->takes_value) {
      if (inline_value) return invalidArgument("option '" + shown + "' takes no value");
      parsed.options[spec->name] = "";
      continue;
    }
    if (inline_value) {
      parsed.options[spec->name] = *inline_value;
      continue;
    }
    if (i + 1 >= args.size())
      return invalidArgument("option '" + shown + "' needs a value" +
                             (spec->value_name.empty() ? std::string() : " (" + spec->value_name + ")"));
    parsed.options[spec->name] = args[++i];
  }
  return parsed;
}

}  // namespace nk::cli
