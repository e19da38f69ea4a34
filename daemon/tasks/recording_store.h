#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "tasks/recording_quota.h"

namespace nk {

// The recordings directory, kept within its quota: what each recording
// holds and whose it is, counted as frames are appended, and the ended
// recordings RecordingQuota picks removed from disk. Recordings an earlier
// run left are taken into account at construction (owner from the name,
// else the file's owner; ended at their last change). Only regular files
// named as recordings are ever counted or removed. Thread-safe.
class RecordingStore {
 public:
  using Clock = RecordingQuota::Clock;
  using Removals = std::vector<RecordingQuota::Removal>;

  struct Options {
    RecordingLimits limits;
    std::function<Clock::time_point()> clock = [] { return Clock::now(); };
    std::chrono::seconds sweep_interval = std::chrono::minutes(1);
    // A recording that could not be removed.
    std::function<void(const std::string&)> warn = [](const std::string&) {};
  };
  struct Growth {
    bool allowed = true;
    std::string refusal;
    Removals removed;  // already gone from disk
  };

  RecordingStore(std::filesystem::path dir, Options options);

  // "session-3-pid42-uid1000.nkrec": the owner travels with the file, so
  // that the next run charges it to the right user.
  static std::string fileName(uint64_t session, pid_t pid, uid_t owner);
  // What a recording's name says: its session id, and its owner when the
  // name carries one. Empty for any other name.
  struct NameParts {
    uint64_t session = 0;
    std::optional<uid_t> owner;
  };
  static std::optional<NameParts> parseName(std::string_view file_name);

  const std::filesystem::path& directory() const { return dir_; }
  // The highest session id among the recordings found at construction.
  uint64_t highestSessionId() const { return highest_session_; }

  // A new live recording of `bytes` (its file header), before it is created.
  Growth admit(const std::filesystem::path& recording, uid_t owner, uint64_t bytes);
  // Before `bytes` more are appended to a live recording.
  Growth grow(const std::filesystem::path& recording, uint64_t bytes);
  // `bytes` more for the recording, only if they fit as things are: nothing
  // is removed to make room (room to rewrite a recording smaller, say, is
  // not worth another of the owner's recordings). Nothing charged unless
  // kReserved.
  enum class Reservation { kReserved, kNoRoom, kGone };
  Reservation reserve(const std::filesystem::path& recording, uint64_t bytes);
  // Puts `rewritten` (a file beside it, `bytes` long) in the recording's
  // place and counts it at that size, if the store still counts the
  // recording; otherwise `rewritten` is removed and the answer is false. A
  // recording removed while it was being rewritten so stays removed: the
  // check and the rename are one step under the store's lock, which every
  // removal takes. A failed rename removes `rewritten` too (false, `error`
  // set) and leaves the count as it was.
  bool replace(const std::filesystem::path& recording, const std::filesystem::path& rewritten, uint64_t bytes,
               std::error_code& error);
  // The recording's size as its writer knows it (after a failed append).
  void resize(const std::filesystem::path& recording, uint64_t bytes);
  // Its file was never created.
  void discard(const std::filesystem::path& recording);
  // Its program has gone: from now on it may be removed.
  void end(const std::filesystem::path& recording);

  // The ended recordings the quota says must go, removed.
  Removals sweep();
  // sweep(), when sweep_interval has passed since the last sweep.
  Removals sweepIfDue();

  uint64_t totalBytes() const;
  uint64_t userBytes(uid_t owner) const;

 private:
  struct Entry {
    uid_t owner = 0;
    uint64_t bytes = 0;
    std::optional<Clock::time_point> ended;
  };
  void scan();
  std::vector<RecordingQuota::Recording> recordingsLocked() const;
  bool fitsLocked(uid_t owner, uint64_t bytes) const;
  Growth growLocked(const std::string& path, uint64_t bytes);
  void addLocked(const std::string& path, uint64_t bytes);
  // The entry's bytes, and its owner's and the total with them.
  void resizeLocked(Entry& entry, uint64_t bytes);
  Removals removeLocked(std::vector<RecordingQuota::Removal> removals);
  Removals sweepLocked();

  std::filesystem::path dir_;
  Options options_;
  RecordingQuota quota_;
  uint64_t highest_session_ = 0;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::map<uid_t, uint64_t> by_user_;
  uint64_t total_ = 0;
  Clock::time_point last_sweep_;
};

}  // namespace nk
