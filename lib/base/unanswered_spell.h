#pragma once

#include <chrono>
#include <optional>

namespace nk {

// A run of calls to the daemon that got no answer in time. On a busy node a
// daemon answers late, not never: such a run means "gone" only once it has
// lasted `quiet_for` with no answer in between. The client library and the
// PMPI agent both decide this way, so that neither cries wolf.
class UnansweredSpell {
 public:
  using Clock = std::chrono::steady_clock;

  explicit UnansweredSpell(Clock::duration quiet_for) : quiet_for_(quiet_for) {}

  // An answer ends the spell.
  void answered() { since_.reset(); }
  // One more call unanswered at `now` (the first begins the spell): true
  // once the spell has lasted `quiet_for`.
  bool unanswered(Clock::time_point now) {
    if (!since_) since_ = now;
    return now - *since_ >= quiet_for_;
  }
  // How long the spell has lasted at `now` (zero when there is none).
  Clock::duration length(Clock::time_point now) const { return since_ ? now - *since_ : Clock::duration::zero(); }
  // Whole seconds, for a person reading a log line.
  long long seconds(Clock::time_point now) const {
    return std::chrono::duration_cast<std::chrono::seconds>(length(now)).count();
  }

 private:
  Clock::duration quiet_for_;
  std::optional<Clock::time_point> since_;
};

}  // namespace nk
