#pragma once

#include <filesystem>

#include "process_inspector.h"

namespace nk {

// ProcessInspector over procfs mounted at `root` ("/proc" on a real node).
class ProcProcessInspector final : public ProcessInspector {
 public:
  explicit ProcProcessInspector(std::filesystem::path root = "/proc");

  std::optional<uint64_t> startTime(pid_t pid) const override;
  bool hasThread(pid_t pid, pid_t tid) const override;

 private:
  std::filesystem::path root_;
};

}  // namespace nk
