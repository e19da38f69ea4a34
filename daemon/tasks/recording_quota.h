#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nk {

// How much task recording the state directory keeps.
struct RecordingLimits {
  uint64_t per_user_bytes = 2ull << 30;
  uint64_t total_bytes = 10ull << 30;
  std::chrono::seconds max_age = std::chrono::hours(24 * 7);
};

// Decides, from what is recorded, which ended recordings go and whether a
// live one may grow. Never names a live recording for removal, and only
// ever names recordings it was given: what else lies in the state
// directory (the saved controls) is not its business.
class RecordingQuota {
 public:
  using Clock = std::chrono::system_clock;

  struct Recording {
    std::filesystem::path path;
    uid_t owner = 0;
    uint64_t bytes = 0;
    std::optional<Clock::time_point> ended;  // empty while its program still streams
  };
  struct Removal {
    std::filesystem::path path;
    uint64_t bytes = 0;
    std::string reason;
  };
  struct Growth {
    bool allowed = true;
    std::string refusal;            // why not, when not allowed
    std::vector<Removal> removals;  // to carry out before growing (none when refused)
  };

  explicit RecordingQuota(RecordingLimits limits) : limits_(limits) {}

  // Ended recordings older than the age limit, then, oldest ended first,
  // those that keep a user over their quota or everyone over the total.
  std::vector<Removal> sweep(std::span<const Recording> recordings, Clock::time_point now) const;
  // Before `owner`'s live recording grows by `bytes` (or a new one starts
  // with them): the ended recordings to remove, oldest first, so that it
  // fits under both limits; refused when even removing every ended one
  // would not make room (live recordings alone fill the quota).
  Growth grow(std::span<const Recording> recordings, uid_t owner, uint64_t bytes) const;

  const RecordingLimits& limits() const { return limits_; }

  // "2 GiB", "512 MiB", "4096 bytes": for messages.
  static std::string describeBytes(uint64_t bytes);

 private:
  RecordingLimits limits_;
};

}  // namespace nk
