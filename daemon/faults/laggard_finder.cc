#include "faults/laggard_finder.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace nk {

namespace {

bool isDownState(std::string_view state) {
  return state == "stopped" || state == "zombie" || state == "gone" || state == "unreachable";
}

std::string secondsAgo(std::chrono::nanoseconds age) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "last progress report %.1f s ago",
                std::chrono::duration<double>(age).count());
  return buffer;
}

// True when `a` reported more recently than `b`; never reported is oldest.
bool fresher(const MemberState& a, const MemberState& b) {
  if (!a.report_age) return false;
  if (!b.report_age) return true;
  return *a.report_age < *b.report_age;
}

}  // namespace

LaggardFindings LaggardFinder::find(const CollectiveTimeout& timeout, std::span<const MemberState> states) const {
  std::unordered_map<uint32_t, const MemberState*> by_rank;
  for (const MemberState& state : states) {
    auto [it, fresh] = by_rank.emplace(state.rank, &state);
    if (!fresh && fresher(state, *it->second)) it->second = &state;
  }
  std::vector<uint32_t> members(timeout.members.begin(), timeout.members.end());
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());

  LaggardFindings findings;
  for (uint32_t rank : members) {
    if (rank == timeout.reporter_rank) continue;
    auto it = by_rank.find(rank);
    if (it == by_rank.end()) {
      findings.unknown.push_back(rank);
      continue;
    }
    const MemberState& state = *it->second;
    std::vector<std::string> reasons;
    if (state.process_state == "unreachable") reasons.push_back("its node's daemon did not answer");
    else if (isDownState(state.process_state)) reasons.push_back("process " + state.process_state);
    if (state.process_state != "unreachable") {
      uint64_t entered = 0;
      for (const CommProgressRecord& comm : state.communicators)
        if (comm.communicator == timeout.communicator) {
          entered = comm.collectives_entered;
          break;
        }
      if (entered < timeout.collective_seq)
        reasons.push_back("entered " + std::to_string(entered) + " of " + std::to_string(timeout.collective_seq) +
                          " collectives of " + std::string(timeout.communicator));
      if (!state.report_age) reasons.push_back("no progress report yet");
      else if (*state.report_age > stale_after_) reasons.push_back(secondsAgo(*state.report_age));
    }
    if (reasons.empty()) continue;
    std::string reason;
    for (const auto& r : reasons) reason += (reason.empty() ? "" : ", ") + r;
    findings.laggards.push_back({rank, state.node, std::move(reason)});
  }
  return findings;
}

}  // namespace nk
