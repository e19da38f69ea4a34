#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"

namespace nk {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// Logs to the journal with structured fields when systemd started us with
// its journal on stderr, else one line per message on stderr.
class Logger {
 public:
  using Field = std::pair<std::string_view, std::string>;

  static void configure(LogLevel level, bool journal);
  static bool stderrIsJournal();
  static Result<LogLevel> parseLevel(std::string_view text);

  static void log(LogLevel level, std::string_view message, std::initializer_list<Field> fields = {});
  static void error(std::string_view message, std::initializer_list<Field> fields = {}) { log(LogLevel::kError, message, fields); }
  static void warning(std::string_view message, std::initializer_list<Field> fields = {}) { log(LogLevel::kWarning, message, fields); }
  static void info(std::string_view message, std::initializer_list<Field> fields = {}) { log(LogLevel::kInfo, message, fields); }
  static void debug(std::string_view message, std::initializer_list<Field> fields = {}) { log(LogLevel::kDebug, message, fields); }
};

}  // namespace nk
