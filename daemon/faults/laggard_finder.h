#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "faults/job_registry.h"

namespace nk {

// A rank timed out in a collective: which one, and who else is in it.
struct CollectiveTimeout {
  std::string_view communicator;
  uint64_t collective_seq = 0;  // the collective it waits in, counted from 1
  std::span<const uint32_t> members;  // world ranks
  uint32_t reporter_rank = 0;
};

// One rank as the daemon of its node described it.
struct MemberState {
  uint32_t rank = 0;
  std::string node;
  std::vector<CommProgressRecord> communicators;
  // Since its last progress report, by the clock of the daemon that holds
  // it; nullopt when it never reported.
  std::optional<std::chrono::nanoseconds> report_age;
  // "running", "sleeping", "stopped", "zombie", "gone", or "unreachable"
  // when its node's daemon did not answer.
  std::string process_state;
};

// A member that has not arrived, and why the finder thinks so.
struct Laggard {
  uint32_t rank = 0;
  std::string node;
  std::string reason;  // e.g. "entered 4 of 5 collectives of world"
};

struct LaggardFindings {
  std::vector<Laggard> laggards;  // by rank
  // Members no daemon described (this daemon lacks the job's node list, or
  // the rank's daemon does not know it): nothing says they lag, so they are
  // not accused, only named.
  std::vector<uint32_t> unknown;
};

// Names the members of a collective that have not arrived at it, from the
// progress their agents report (no MPI traffic): a member is a laggard when
// it has entered fewer collectives of the communicator than the reporter
// waits in (a member that never reported the communicator has entered 0),
// when its last report is older than `stale_after` (its agent no longer
// runs), or when its process is stopped, a zombie, gone, or on a node
// whose daemon did not answer. The reporter itself never is. Pure.
class LaggardFinder {
 public:
  explicit LaggardFinder(std::chrono::nanoseconds stale_after) : stale_after_(stale_after) {}

  // Each member once. Where several states describe one rank, the
  // freshest counts.
  LaggardFindings find(const CollectiveTimeout& timeout, std::span<const MemberState> states) const;

  std::chrono::nanoseconds staleAfter() const { return stale_after_; }

 private:
  std::chrono::nanoseconds stale_after_;
};

}  // namespace nk
