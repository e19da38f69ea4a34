#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "base/result.h"
#include "platform/trusted_directory.h"

namespace nk {

// Original values of every hardware control the daemon has touched, kept in
// a state file written (and fsynced) before the first write to each control,
// so that they can be restored on stop and at the next start after a crash.
class SavedControls {
 public:
  // Keys name a control as "<domain>:<id>:<file>", e.g. "cpufreq:3:scaling_max_freq".
  struct ControlKey {
    std::string domain;
    uint32_t id = 0;
    std::string file;
  };
  static std::string makeKey(std::string_view domain, uint32_t id, std::string_view file);
  static std::optional<ControlKey> splitKey(std::string_view key);

  struct Entry {
    std::string key;       // e.g. "cpufreq:3:scaling_max_freq"
    std::string original;  // the value before nodekeeper's first write
  };

  // Loads what a previous run left behind (after a crash), if anything.
  // The file's directory must be one the daemon can trust
  // (TrustedDirectory): the originals written back at the next start are
  // root's hardware settings, not something another user may plant.
  static Result<SavedControls> open(std::filesystem::path file);

  bool contains(const std::string& key) const;
  // Records `original` for `key` unless the key is known already; returns
  // only once the state file is on disk.
  Status remember(const std::string& key, const std::string& original);
  const std::vector<Entry>& entries() const { return entries_; }
  // Drops everything (after a restore) and removes the state file.
  Status clear();

  // The state file's format, exposed for tests and the fuzzer.
  static Result<std::vector<Entry>> parse(std::string_view text);
  static std::string serialize(const std::vector<Entry>& entries);

 private:
  SavedControls(TrustedDirectory dir, std::filesystem::path file)
      : dir_(std::move(dir)), file_(std::move(file)), name_(file_.filename().string()) {}
  Status persist() const;

  TrustedDirectory dir_;
  std::filesystem::path file_;
  std::string name_;
  std::vector<Entry> entries_;
};

}  // namespace nk
