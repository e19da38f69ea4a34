#pragma once

#include <filesystem>

#include "faults/process_state_reader.h"

namespace nk {

// ProcessStateReader over procfs mounted at `root` ("/proc" on a real node):
// the state letter, CPU time and start time of /proc/<pid>/stat.
class ProcProcessStateReader final : public ProcessStateReader {
 public:
  explicit ProcProcessStateReader(std::filesystem::path root = "/proc");

  std::optional<ProcessStatus> read(pid_t pid) const override;

  // R running; S, D, I sleeping; T, t stopped; Z, X, x zombie. Letters of
  // other kernels' states (W, P, K, ...) count as sleeping: nothing in them
  // says the process will not come back.
  static ProcessState fromLetter(char letter);

 private:
  std::filesystem::path root_;
};

}  // namespace nk
