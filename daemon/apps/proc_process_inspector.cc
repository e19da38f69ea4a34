#include "proc_process_inspector.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "common/units.h"

namespace nk {

ProcProcessInspector::ProcProcessInspector(std::filesystem::path root) : root_(std::move(root)) {}

// /proc/<pid>/stat is "pid (comm) state ppid ... starttime ..."; comm may
// hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<uint64_t> ProcProcessInspector::startTime(pid_t pid) const {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(root_ / std::to_string(pid) / "stat");
  if (!in) return std::nullopt;
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  auto fields = splitWhitespace(std::string_view(stat).substr(close + 1));
  // fields[0] is field 3 (state); starttime is field 22.
  if (fields.size() < 20) return std::nullopt;
  if (fields[0] == "Z" || fields[0] == "X" || fields[0] == "x") return std::nullopt;
  uint64_t start = 0;
  std::string_view word = fields[19];
  auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), start);
  if (ec != std::errc()) return std::nullopt;
  return start;
}

bool ProcProcessInspector::hasThread(pid_t pid, pid_t tid) const {
  if (pid <= 0 || tid <= 0) return false;
  std::error_code ec;
  return std::filesystem::is_directory(root_ / std::to_string(pid) / "task" / std::to_string(tid), ec);
}

}  // namespace nk
