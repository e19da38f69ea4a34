#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"
#include "daemon_config.h"

namespace nk {

// The daemon's command-line flags, each described once: its names, whether
// it takes a value, its help text and what it sets. The parser and --help
// both read this table, so a flag cannot be accepted without being
// documented, or documented without being accepted.
class DaemonFlagTable {
 public:
  // What the command line said, before the config file goes under it.
  struct Parsed {
    DaemonConfig config;  // the flags that have a config-file key
    std::optional<std::string> config_path;
    bool show_help = false;
    bool show_version = false;
  };

  enum class Value {
    kNone,      // --version; a "=value" after it is ignored
    kRequired,  // --socket PATH or --socket=PATH
    kOptional,  // --emulate [PROFILE]: the next word unless it is a flag
  };

  // The accepted range of a numeric flag.
  struct Range {
    uint32_t low = 0;
    uint32_t high = 0;
  };

  struct Flag {
    std::string_view name;        // "--socket"
    std::string_view short_name;  // "-h", or empty
    Value value = Value::kNone;
    std::string_view value_name;  // "PATH", as the help shows it
    std::string_view section = "Options";  // the help's heading it is listed under
    std::string_view help;        // lines separated by '\n'
    std::optional<Range> range;   // numeric flags only
    // Applies the flag (itself the first argument: its name and range go
    // into messages). `value` is empty only for kNone, and for kOptional
    // given no value.
    std::function<Status(const Flag&, Parsed&, const std::optional<std::string>& value)> set;
  };

  static std::span<const Flag> flags();
  // By its long or short name; nullptr if there is none.
  static const Flag* find(std::string_view name);
  // args[0] is the program name.
  static Result<Parsed> parse(std::span<const char* const> args);
  static std::string helpText();
};

}  // namespace nk
