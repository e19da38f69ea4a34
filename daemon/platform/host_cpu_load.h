#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "base/result.h"

namespace nk {

// Per-CPU utilisation from <root>/proc/stat, as the share of non-idle time
// between two calls to sample().
class HostCpuLoad {
 public:
  explicit HostCpuLoad(std::filesystem::path root = "/");
  // Utilisation per CPU (index = CPU number) since the previous call; the
  // first call returns zeros.
  Result<std::vector<double>> sample();
  uint32_t cpuCount() const { return static_cast<uint32_t>(last_busy_.size()); }

 private:
  std::filesystem::path stat_path_;
  std::vector<uint64_t> last_busy_;
  std::vector<uint64_t> last_total_;
  // Offline CPUs have no line; their slot stays but must not be diffed.
  std::vector<bool> last_present_;
};

}  // namespace nk
