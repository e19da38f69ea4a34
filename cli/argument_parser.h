#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace nk::cli {

// One accepted option: long name without dashes ("cpu"), an optional short
// letter, and whether it takes a value.
struct OptionSpec {
  std::string name;
  char short_name = 0;
  bool takes_value = false;
  std::string value_name;  // shown in help, e.g. "LIST"
  std::string help;
};

// What the parser found: options by long name (flags map to ""), positionals
// in order, and, when parsing stopped early, the unparsed tail.
struct ParsedArguments {
  std::map<std::string, std::string> options;
  std::vector<std::string> positionals;
  std::vector<std::string> rest;
  bool after_separator = false;  // positionals came after "--"

  bool has(const std::string& name) const { return options.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
};

// A small GNU-style parser: "--name VALUE", "--name=VALUE", "-x VALUE", "-x",
// and "--" ending the options.
class ArgumentParser {
 public:
  explicit ArgumentParser(std::vector<OptionSpec> options);

  Result<ParsedArguments> parse(const std::vector<std::string>& args) const;
  // Stops at the first positional argument and leaves it and everything
  // after it in `rest`; used for the global options before the command.
  Result<ParsedArguments> parseUntilPositional(const std::vector<std::string>& args) const;

  const std::vector<OptionSpec>& options() const { return options_; }

 private:
  Result<ParsedArguments> run(const std::vector<std::string>& args, bool stop_at_positional) const;
  const OptionSpec* findLong(const std::string& name) const;
  const OptionSpec* findShort(char name) const;

  std::vector<OptionSpec> options_;
};

}  // namespace nk::cli
