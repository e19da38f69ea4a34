#include "testlib/processes.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
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

}  // namespace nk::test
