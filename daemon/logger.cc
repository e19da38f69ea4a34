#include "logger.h"

#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace nk {

namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<bool> g_journal{false};
std::mutex g_stderr_mutex;

int syslogPriority(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return LOG_ERR;
    case LogLevel::kWarning: return LOG_WARNING;
    case LogLevel::kInfo: return LOG_INFO;
    case LogLevel::kDebug: return LOG_DEBUG;
  }
  return LOG_INFO;
}

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "info";
}
}  // namespace

void Logger::configure(LogLevel level, bool journal) {
  g_level = static_cast<int>(level);
  g_journal = journal;
}

bool Logger::stderrIsJournal() {
  // systemd's own test: JOURNAL_STREAM names the device and inode of the
  // stream it connected to our stderr.
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (!stream) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(2, &st) != 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

Result<LogLevel> Logger::parseLevel(std::string_view text) {
  if (text == "error") return LogLevel::kError;
  if (text == "warning" || text == "warn") return LogLevel::kWarning;
  if (text == "info") return LogLevel::kInfo;
  if (text == "debug") return LogLevel::kDebug;
  return invalidArgument("unknown log level '" + std::string(text) + "' (use error, warning, info or debug)");
}

void Logger::log(LogLevel level, std::string_view message, std::initializer_list<Field> fields) {
  if (static_cast<int>(level) > g_level.load()) return;
  if (g_journal) {
    std::vector<std::string> strings;
    strings.reserve(fields.size() + 3);
    strings.push_back("MESSAGE=" + std::string(message));
    strings.push_back("PRIORITY=" + std::to_string(syslogPriority(level)));
    strings.push_back("SYSLOG_IDENTIFIER=nodekeeperd");
    for (const auto& [key, value] : fields) strings.push_back("NK_" + std::string(key) + "=" + value);
    std::vector<iovec> iov;
    for (auto& s : strings) iov.push_back({s.data(), s.size()});
    sd_journal_sendv(iov.data(), static_cast<int>(iov.size()));
    return;
  }
  std::string line = "nodekeeperd: " + std::string(levelName(level)) + ": " + std::string(message);
  for (const auto& [key, value] : fields) line += " " + std::string(key) + "=" + value;
  line += "\n";
  std::lock_guard lock(g_stderr_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace nk
