#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace nk {

// Reads and writes the small one-value files of sysfs and procfs, turning
// every failure (vanished file, garbage, permissions) into an Error that
// names the path.
class SysfsFile {
 public:
  // sysfs attributes are at most a page; the cap keeps a runaway file (or a
  // fuzzer) from making us slurp gigabytes.
  static constexpr size_t kDefaultMaxBytes = 64 * 1024;

  static bool exists(const std::filesystem::path& path);

  static Result<std::string> readText(const std::filesystem::path& path,
                                      size_t max_bytes = kDefaultMaxBytes);
  static Result<uint64_t> readUint64(const std::filesystem::path& path);
  static Result<int64_t> readInt64(const std::filesystem::path& path);
  static Result<std::vector<std::string>> readWords(const std::filesystem::path& path);
  static Result<std::vector<uint64_t>> readUint64List(const std::filesystem::path& path);

  static Status write(const std::filesystem::path& path, std::string_view value);
  static Status write(const std::filesystem::path& path, uint64_t value);

  // Entries of `dir` named <prefix>N (N decimal, nothing after it), sorted
  // by N: policyN, intel-rapl:N, hwmonN.
  struct IndexedEntry {
    uint32_t index = 0;
    std::filesystem::path path;
  };
  static Result<std::vector<IndexedEntry>> listIndexed(const std::filesystem::path& dir,
                                                       std::string_view prefix);
  // N when `name` is exactly <prefix>N.
  static std::optional<uint32_t> indexAfterPrefix(std::string_view name, std::string_view prefix);

  // The parsers behind the readers; `path` only goes into the message.
  static Result<uint64_t> parseUint64(std::string_view text, const std::filesystem::path& path);
  static Result<int64_t> parseInt64(std::string_view text, const std::filesystem::path& path);
};

}  // namespace nk
