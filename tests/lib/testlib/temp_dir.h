#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nk::test {

// A scratch directory for one test or benchmark run, removed with
// everything in it when the object goes. Creating it throws
// std::system_error, which GoogleTest reports as the test's failure.
class TempDir {
 public:
  enum class Access {
    // Under $TMPDIR (else /tmp), mode 0700.
    kPrivate,
    // Under /tmp, mode 0755: a daemon's socket lives there, the path must
    // stay short for sun_path, and tests connect as other users too.
    kShared,
  };

  explicit TempDir(std::string_view tag = "test", Access access = Access::kPrivate);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::filesystem::path& relative) const { return path_ / relative; }

  // Writes `text` to `relative` (parents created), replacing it; returns its path.
  std::filesystem::path writeFile(const std::filesystem::path& relative, std::string_view text) const;

 private:
  std::filesystem::path path_;
};

}  // namespace nk::test
