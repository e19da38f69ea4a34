#include "faults/proc_process_state_reader.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "common/units.h"

namespace nk {

ProcProcessStateReader::ProcProcessStateReader(std::filesystem::path root) : root_(std::move(root)) {}

ProcessState ProcProcessStateReader::fromLetter(char letter) {
  switch (letter) {
    case 'R': return ProcessState::kRunning;
    case 'T':
    case 't': return ProcessState::kStopped;
    case 'Z':
    case 'X':
    case 'x': return ProcessState::kZombie;
    default: return ProcessState::kSleeping;
  }
}

// /proc/<pid>/stat is "pid (comm) state ppid ... starttime ..."; comm may
// hold spaces and parentheses, so fields are counted after the last ')'.
std::optional<ProcessStatus> ProcProcessStateReader::read(pid_t pid) const {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(root_ / std::to_string(pid) / "stat");
  if (!in) return std::nullopt;
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  auto fields = splitWhitespace(std::string_view(stat).substr(close + 1));
  if (fields.empty() || fields[0].empty()) return std::nullopt;
  ProcessStatus status;
  status.state = fromLetter(fields[0][0]);
  // fields[0] is field 3 (state); starttime is field 22.
  if (fields.size() >= 20) {
    std::string_view word = fields[19];
    uint64_t start = 0;
    auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), start);
    if (ec == std::errc()) status.start_time = start;
  }
  return status;
}

}  // namespace nk
