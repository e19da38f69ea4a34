#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace nk {

// The kernel's CPU pressure (PSI, <root>/proc/pressure/cpu): "some avg10",
// the share of the last 10 s in which some runnable task waited for a CPU.
// How busy the host is for threads that are not the busiest, such as an MPI
// agent's reporting thread.
class CpuPressure {
 public:
  explicit CpuPressure(std::filesystem::path root = "/");
  // 0 to 100; nullopt when the kernel has no PSI (or it is off).
  std::optional<double> someAvg10() const;
  // The "some" line's avg10 of the file's text.
  static std::optional<double> parse(std::string_view text);

 private:
  std::filesystem::path path_;
};

}  // namespace nk
