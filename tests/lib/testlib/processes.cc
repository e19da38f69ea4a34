#include "testlib/processes.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "testlib/files.h"

namespace nk::test {

std::string cmdlineOf(pid_t pid) {
  std::string text = readFile("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

pid_t parentOf(pid_t pid) {
  std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return -1;
  char state = 0;
  int ppid = -1;
  if (std::sscanf(stat.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

std::vector<pid_t> descendantsOf(pid_t root) {
  std::vector<pid_t> out{root};
  for (size_t i = 0; i < out.size(); ++i) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
      pid_t pid = std::stoi(name);
      if (parentOf(pid) == out[i] && std::find(out.begin(), out.end(), pid) == out.end()) out.push_back(pid);
    }
  }
  out.erase(out.begin());
  return out;
}

long statusNumber(pid_t pid, std::string_view field) {
  const std::string status = readFile("/proc/" + std::to_string(pid) + "/status");
  for (size_t at = 0; at < status.size();) {
    size_t end = status.find('\n', at);
    if (end == std::string::npos) end = status.size();
    std::string_view line(status.data() + at, end - at);
    if (line.starts_with(field)) return std::atol(std::string(line.substr(field.size())).c_str());
    at = end + 1;
  }
  return -1;
}

double cpuSecondsOf(pid_t pid) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return -1;
  // After the name: state (3) ... utime (14), stime (15).
  unsigned long long utime = 0, stime = 0;
  if (std::sscanf(stat.c_str() + close_paren + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                  &stime) != 2)
    return -1;
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace nk::test
