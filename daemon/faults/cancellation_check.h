#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "faults/local_rank_watch.h"

namespace nk {

// Whether a job whose ranks here ended by a cancelling signal (SIGTERM,
// SIGINT, SIGHUP) was cancelled, or torn down after a crash on another
// node: when a rank on node b crashes, mpirun ends the ranks on node a with
// SIGTERM, and node a sees only SIGTERM. So a cancellation seen here is
// confirmed only after `grace` without news of a crash elsewhere (a
// rank_exited symptom or a process_crash fault about another node reaching
// this one); with such news, before or during the grace, it is no
// cancellation. Driven by the fault tree's thread and its clock.
class CancellationCheck {
 public:
  explicit CancellationCheck(std::chrono::milliseconds grace) : grace_(grace) {}

  // LocalRankWatch found the job cancelled here at `now_ns`.
  void seen(const LocalRankWatch::Cancellation& cancellation, int64_t now_ns);
  // A rank of the job crashed on `node` (another node than this one).
  // True the first time: the job is known to have crashed from now on.
  bool crashNews(const std::string& node);
  // The cancellation, once, when its grace has passed without crash news.
  // `grace_factor` grows the grace on a busy host (SchedulingDelay).
  std::optional<LocalRankWatch::Cancellation> confirmed(int64_t now_ns, double grace_factor = 1.0);

  // A cancellation waits for its grace: the job's tree stays until then.
  bool pending() const { return pending_.has_value(); }
  // The node a crash was heard of first; "" when none.
  const std::string& crashedOn() const { return crashed_on_; }
  // The cancellation seen here that crash news made a crash's teardown.
  const std::optional<LocalRankWatch::Cancellation>& overruled() const { return overruled_; }

 private:
  std::chrono::milliseconds grace_;
  std::optional<LocalRankWatch::Cancellation> pending_;
  int64_t seen_ns_ = 0;
  std::string crashed_on_;
  std::optional<LocalRankWatch::Cancellation> overruled_;
  bool confirmed_ = false;
};

}  // namespace nk
