#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "faults/job_registry.h"
#include "faults/laggard_finder.h"
#include "faults/symptom_record.h"

namespace nk {

class PeerNetwork;

// A symptom a rank reports, from its arrival to what the daemon stores:
// checked against the job registry (sizes of its texts, its ranks within the
// job, a suspect node that is one of the job's nodes, the caller's right to
// speak for the reporter), then filled in (the owner, the time, the
// reporter's node, the suspects' nodes). A rank that timed out in a
// collective does not know who kept it waiting: the intake asks the other
// nodes' daemons how far their ranks got (all at once through PeerNetwork)
// and names the laggards (LaggardFinder).
class SymptomIntake {
 public:
  struct Options {
    // The whole round of RankProgress calls; a node that does not answer
    // in time counts as unreachable.
    std::chrono::milliseconds peer_timeout{500};
    // The agents' progress period, and how many of them may pass without a
    // report before a rank counts as not arriving.
    std::chrono::milliseconds heartbeat_period{200};
    unsigned stale_periods = 3;
    // How other daemons reach this one: its Unix socket ("unix:" + path)
    // and --listen ("" unset). Nodes at these endpoints are not asked.
    std::string own_endpoint;
    std::string peer_endpoint;
    std::function<void(const std::string&)> log_warning;
  };

  static constexpr size_t kMaxTextBytes = 256;
  static constexpr size_t kMaxDetailBytes = 4096;
  // Laggards named in a symptom's detail; the rest are counted.
  static constexpr size_t kLaggardsInDetail = 8;

  SymptomIntake(const JobRegistry& jobs, PeerNetwork& network, Options options);

  // The symptom as reported (symptom_id and uid are ignored), checked and
  // filled in, ready to store. `caller_pid`: the reporting process, which
  // must have registered the reporter rank; nullopt for an admin, who may
  // speak for any rank. `now_ns`: this daemon's wall clock.
  Result<SymptomRecord> take(SymptomRecord reported, std::optional<pid_t> caller_pid, int64_t now_ns);

 private:
  Status check(const SymptomRecord& reported, const JobRecord& job) const;
  // The members' states: this daemon's ranks, and those the other nodes'
  // daemons give.
  std::vector<MemberState> gatherStates(const JobRecord& job, const std::set<uint32_t>& members, int64_t now_ns);
  void findLaggards(const JobRecord& job, SymptomRecord& symptom, int64_t now_ns);
  void warn(const std::string& message) const;

  const JobRegistry& jobs_;
  PeerNetwork& network_;
  Options options_;
};

}  // namespace nk
