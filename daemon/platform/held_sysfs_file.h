#pragma once

#include <cstdint>
#include <filesystem>

#include "base/result.h"

namespace nk {

// A sysfs value read over and over (scaling_cur_freq, energy_uj, temp*_input)
// through a descriptor kept open: pread at offset 0 makes sysfs produce the
// value afresh, and skips the path lookup that dominates the sampler's cost.
// Any failure closes the descriptor and falls back to a plain read, which
// also gives the error its message; the descriptor is reopened now and then
// so that a file replaced behind our back is noticed.
class HeldSysfsFile {
 public:
  explicit HeldSysfsFile(std::filesystem::path path) : path_(std::move(path)) {}
  ~HeldSysfsFile();
  HeldSysfsFile(HeldSysfsFile&& other) noexcept;
  HeldSysfsFile& operator=(HeldSysfsFile&& other) noexcept;
  HeldSysfsFile(const HeldSysfsFile&) = delete;
  HeldSysfsFile& operator=(const HeldSysfsFile&) = delete;

  Result<uint64_t> readUint64();
  Result<int64_t> readInt64();
  const std::filesystem::path& path() const { return path_; }

 private:
  // The trimmed text via the held descriptor, or false to fall back.
  bool readHeld(std::string& text);
  void close();

  std::filesystem::path path_;
  int fd_ = -1;
  unsigned reads_since_open_ = 0;
};

}  // namespace nk
