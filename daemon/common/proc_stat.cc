#include "proc_stat.h"

#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "base/units.h"

namespace nk {

// /proc/<pid>/stat is "pid (comm) state ppid ... starttime ..."; comm may
// hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<ProcStat> ProcStat::read(const std::filesystem::path& root, pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(root / std::to_string(pid) / "stat");
  if (!in) return std::nullopt;
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  auto fields = splitWhitespace(std::string_view(stat).substr(close + 1));
  if (fields.empty() || fields[0].empty()) return std::nullopt;
  ProcStat out;
  out.state = fields[0][0];
  if (fields.size() >= 2) {
    pid_t parent = 0;
    auto [p_end, p_ec] = std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), parent);
    if (p_ec == std::errc()) out.ppid = parent;
  }
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15,
  // starttime is field 22.
  if (fields.size() >= 13) {
    uint64_t utime = 0, stime = 0;
    auto [u_end, u_ec] = std::from_chars(fields[11].data(), fields[11].data() + fields[11].size(), utime);
    auto [s_end, s_ec] = std::from_chars(fields[12].data(), fields[12].data() + fields[12].size(), stime);
    if (u_ec == std::errc() && s_ec == std::errc()) out.cpu_ticks = utime + stime;
  }
  if (fields.size() >= 20) {
    std::string_view word = fields[19];
    uint64_t start = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), start);
    if (ec == std::errc()) out.start_time = start;
  }
  return out;
}

std::optional<uid_t> ProcStat::owner(const std::filesystem::path& root, pid_t pid) {
  if (pid <= 0) return std::nullopt;
  struct stat st {};
  if (::stat((root / std::to_string(pid)).c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

std::string ProcStat::commandLine(const std::filesystem::path& root, pid_t pid) {
  if (pid <= 0) return "";
  std::ifstream in(root / std::to_string(pid) / "cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The kernel ends every argument with a NUL, the last one included.
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

std::string ProcStat::commandLine(pid_t pid) { return commandLine("/proc", pid); }

}  // namespace nk
