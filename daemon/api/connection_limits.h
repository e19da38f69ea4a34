#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>

namespace nk {

// Counts the Unix socket's open connections per user (uid from SO_PEERCRED)
// and decides whether one more may be admitted. Root is exempt from both
// limits: an administrator must get in while a user holds every slot, and
// root can exhaust the daemon by other means anyway. Root's connections
// still count toward the total seen by others.
class ConnectionLimits {
 public:
  using Clock = std::chrono::steady_clock;

  struct Settings {
    uint32_t per_user = 64;
    uint32_t total = 1024;
  };

  struct Admission {
    bool admitted = false;
    // Refusals are logged once per user per minute: true for the one to log,
    // with how many of that user's refusals (this one included) it stands for.
    bool log_refusal = false;
    uint64_t refusals_since_last_log = 0;
    bool over_total = false;  // else over the per-user limit
  };

  explicit ConnectionLimits(Settings settings) : settings_(settings) {}

  Admission admit(uid_t uid, Clock::time_point now);
  // An admitted connection of `uid` closed.
  void release(uid_t uid);

  size_t open() const { return open_; }
  size_t openBy(uid_t uid) const;
  const Settings& settings() const { return settings_; }

  static constexpr std::chrono::minutes kRefusalLogPeriod{1};

 private:
  struct RefusalLog {
    Clock::time_point last_logged{};
    bool ever_logged = false;
    uint64_t unlogged = 0;
  };

  Settings settings_;
  size_t open_ = 0;
  std::map<uid_t, uint32_t> open_by_user_;
  std::map<uid_t, RefusalLog> refusals_;
};

}  // namespace nk
