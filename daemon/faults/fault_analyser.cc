#include "faults/fault_analyser.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "faults/process_state_reader.h"
#include "faults/rank_condition.h"
#include "faults/rank_ending.h"
#include "faults/scheduling_delay.h"

namespace nk {

namespace {

constexpr size_t kMaxSymptomLines = 10;

bool isRankCondition(ProbeCondition condition) {
  return condition == ProbeCondition::kRankGone || condition == ProbeCondition::kRankStopped ||
         condition == ProbeCondition::kRankStalled;
}

bool isProcessFault(FaultKind kind) { return kind == FaultKind::kProcessHang || kind == FaultKind::kProcessCrash; }

// Symptoms naming "a, b" are about both a and b; blanks and repeats are noise.
std::vector<std::string> suspectNodes(std::string_view joined) {
  std::vector<std::string> nodes;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t comma = joined.find(',', start);
    if (comma == std::string_view::npos) comma = joined.size();
    std::string_view name = joined.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty() && std::find(nodes.begin(), nodes.end(), name) == nodes.end()) nodes.emplace_back(name);
    start = comma + 1;
  }
  return nodes;
}

// Two reports of one observation: the same reporter saw the same thing about
// the same suspects. Timestamps are compared by the caller against the window.
bool sameObservation(const SymptomRecord& a, const SymptomRecord& b) {
  return a.kind == b.kind && a.reporter_node == b.reporter_node && a.reporter_rank == b.reporter_rank &&
         a.suspect_node == b.suspect_node && a.operation == b.operation && a.suspect_ranks == b.suspect_ranks;
}

std::vector<uint32_t> sortedUnique(std::vector<uint32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::string rankWord(const std::vector<uint32_t>& ranks) {
  return (ranks.size() > 1 ? "ranks " : "rank ") + formatRankList(ranks);
}

std::string symptomLine(const SymptomRecord& s) {
  std::string line = std::string(symptomKindName(s.kind)) +
                     (s.reporter_rank == kDaemonReporter
                          ? " from the daemon of " + s.reporter_node
                          : " from rank " + std::to_string(s.reporter_rank) + "@" + s.reporter_node) +
                     ":";
  if (!s.operation.empty()) line += " " + s.operation;
  if (!s.detail.empty()) line += " " + s.detail;
  return line;
}

std::string millis(std::chrono::microseconds us) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f ms", std::chrono::duration<double, std::milli>(us).count());
  return buffer;
}

std::string seconds(std::chrono::milliseconds ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", std::chrono::duration<double>(ms).count());
  return buffer;
}

void appendUnique(std::vector<std::string>& lines, std::string line) {
  if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
}

// A fault's evidence: its symptoms' lines, its probes' lines, and the rule
// that confirmed it, last. `symptom_lines` counts the first part.
struct Evidence {
  std::vector<std::string> lines;
  size_t symptom_lines = 0;
};

// The evidence of one fault reached from two groups, in that order still:
// appended as it came, the second group's symptoms went after the first's
// rule (a reader, and the tests, take the last line for the rule).
Evidence mergedEvidence(Evidence into, Evidence from) {
  Evidence out;
  auto take = [&out](Evidence& e, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) appendUnique(out.lines, std::move(e.lines[i]));
  };
  // probeRule always ends the evidence with the rule.
  const size_t into_rule = into.lines.size() - 1, from_rule = from.lines.size() - 1;
  take(into, 0, into.symptom_lines);
  take(from, 0, from.symptom_lines);
  out.symptom_lines = out.lines.size();
  take(into, into.symptom_lines, into_rule);
  take(from, from.symptom_lines, from_rule);
  take(from, from_rule, from_rule + 1);
  take(into, into_rule, into_rule + 1);
  return out;
}

// How many of a fault's first evidence lines are its group's symptoms
// (probeRule: ten at the most, then "... and N more").
size_t symptomLines(size_t symptoms) { return std::min(symptoms, kMaxSymptomLines) + (symptoms > kMaxSymptomLines); }

// One analyse() call's probes. Lazily asked and remembered so that a node
// several groups and rules ask about is probed once per kind: probes cost the
// suspect node's daemon time exactly when it may be in trouble. Status and log
// are keyed by job as well as node, since their answer is about one job's ranks.
class ProbeCache {
 public:
  ProbeCache(Prober& prober, size_t attempts) : prober_(prober), attempts_(attempts) {}

  const ResponseFindings& response(const std::string& node) {
    auto it = response_.find(node);
    if (it == response_.end()) {
      ++sent_;
      it = response_.emplace(node, prober_.responseProbe(node, attempts_)).first;
    }
    return it->second;
  }

  const StatusFindings& status(const std::string& job, const std::string& node) {
    auto key = std::make_pair(job, node);
    auto it = status_.find(key);
    if (it == status_.end()) {
      // As the response probe does: a lost answer is asked again, or a
      // hang whose symptom is raised once would never be found.
      StatusFindings findings;
      for (size_t attempt = 0; attempt < std::max<size_t>(1, attempts_) && !findings.answered; ++attempt) {
        ++sent_;
        findings = prober_.statusProbe(job, node);
      }
      it = status_.emplace(key, std::move(findings)).first;
    }
    return it->second;
  }

  const StatusFindings* statusIfProbed(const std::string& job, const std::string& node) const {
    auto it = status_.find(std::make_pair(job, node));
    return it == status_.end() ? nullptr : &it->second;
  }

  const LogFindings& log(const std::string& job, const std::string& node, int64_t from_ns, int64_t to_ns) {
    auto key = std::make_tuple(job, node, from_ns, to_ns);
    auto it = log_.find(key);
    if (it == log_.end()) {
      LogFindings findings;
      for (size_t attempt = 0; attempt < std::max<size_t>(1, attempts_) && !findings.answered; ++attempt) {
        ++sent_;
        findings = prober_.logProbe(job, node, from_ns, to_ns);
      }
      it = log_.emplace(key, std::move(findings)).first;
    }
    return it->second;
  }

  size_t sent() const { return sent_; }

 private:
  Prober& prober_;
  size_t attempts_;
  size_t sent_ = 0;
  std::map<std::string, ResponseFindings> response_;
  std::map<std::pair<std::string, std::string>, StatusFindings> status_;
  std::map<std::tuple<std::string, std::string, int64_t, int64_t>, LogFindings> log_;
};

// What one condition showed: whether it held, the ranks that made it hold
// (rank conditions only), and the probe results behind it for the evidence.
struct ConditionResult {
  bool holds = false;
  std::vector<uint32_t> ranks;
  std::vector<std::string> evidence;
};

class GroupProbe {
 public:
  GroupProbe(const FaultAnalyser::Group& group, const FaultRuleBase& rules, ProbeCache& cache, double delay_factor)
      : group_(group),
        rules_(rules),
        cache_(cache),
        job_(group.symptoms.front().job_id),
        delay_factor_(delay_factor),
        stall_after_(SchedulingDelay::scale(rules.stall_after, delay_factor)),
        slow_rtt_(SchedulingDelay::scale(rules.slow_rtt, delay_factor)) {
    std::vector<uint32_t> named;
    for (const SymptomRecord& s : group.symptoms) named.insert(named.end(), s.suspect_ranks.begin(), s.suspect_ranks.end());
    named_ranks_ = sortedUnique(std::move(named));
  }

  const std::vector<uint32_t>& namedRanks() const { return named_ranks_; }

  // The ranks the group is about: those its symptoms name, unless the status
  // probe knows none of them on this node (the reporter named a rank elsewhere,
  // or none), in which case every rank of the job there is suspect.
  std::vector<uint32_t> suspectRanks() const {
    const StatusFindings* status = cache_.statusIfProbed(job_, group_.node);
    if (!status || !status->answered) return named_ranks_;
    std::vector<uint32_t> present;
    for (const RankStatus& r : status->ranks) present.push_back(r.rank);
    present = sortedUnique(std::move(present));
    bool any_named = std::any_of(named_ranks_.begin(), named_ranks_.end(), [&](uint32_t rank) {
      return std::binary_search(present.begin(), present.end(), rank);
    });
    return any_named ? named_ranks_ : present;
  }

  ConditionResult evaluate(ProbeCondition condition) {
    switch (condition) {
      case ProbeCondition::kUnreachable:
      case ProbeCondition::kReachable:
      case ProbeCondition::kSlow: return evaluateResponse(condition);
      case ProbeCondition::kRankGone:
      case ProbeCondition::kRankStopped:
      case ProbeCondition::kRankStalled: return evaluateRanks(condition);
      case ProbeCondition::kRanksHealthy: return evaluateHealthy();
      case ProbeCondition::kHot: return evaluateHot();
      case ProbeCondition::kLogPending: return evaluateLog();
    }
    return {};
  }

 private:
  ConditionResult evaluateResponse(ProbeCondition condition) {
    const ResponseFindings& response = cache_.response(group_.node);
    size_t attempts = response.attempts > 0 ? response.attempts : rules_.probe_attempts;
    ConditionResult result;
    std::string line = "response probe: " + std::to_string(response.answered) + " of " + std::to_string(attempts) +
                       " attempts answered";
    if (response.alive()) line += ", best round trip " + millis(response.best_rtt);
    result.evidence.push_back(std::move(line));
    if (condition == ProbeCondition::kUnreachable) result.holds = !response.alive();
    else if (condition == ProbeCondition::kReachable) result.holds = response.alive();
    else
      result.holds = response.alive() && (response.answered < attempts || response.best_rtt > slow_rtt_);
    return result;
  }

  // A rank that ended by a cancelling signal was cancelled, not lost.
  static bool gone(const RankStatus& r) {
    return (r.state == ProcessState::kGone || r.state == ProcessState::kZombie) && !r.finalized &&
           !RankEnding::isCancellation(r.ending_signal);
  }
  // A rank that called MPI_Finalize is finished, never a hang.
  bool stopped(const RankStatus& r) const {
    return RankCondition::of(r, stall_after_) == RankCondition::Kind::kStopped;
  }
  // Starved is not stalled: a rank whose report is late but whose process
  // runs and uses CPU is on a busy host (RankCondition).
  bool stalled(const RankStatus& r) const {
    return RankCondition::of(r, stall_after_) == RankCondition::Kind::kStalled;
  }

  std::string rankLine(const RankStatus& r) const {
    std::string line = "status probe: rank " + std::to_string(r.rank) + " " + std::string(processStateName(r.state));
    if (!r.current_operation.empty()) line += " in " + r.current_operation;
    if (r.state == ProcessState::kGone || r.state == ProcessState::kZombie) line += " without MPI_Finalize";
    if (stalled(r)) {
      line += ", no report for " + seconds(*r.report_age);
      if (delay_factor_ > 1.0) line += " (stall_after " + SchedulingDelay::describe(rules_.stall_after, delay_factor_) + ")";
    }
    return line;
  }

  ConditionResult evaluateRanks(ProbeCondition condition) {
    const StatusFindings& status = cache_.status(job_, group_.node);
    ConditionResult result;
    if (!status.answered) return result;
    std::vector<uint32_t> suspects = suspectRanks();
    for (const RankStatus& r : status.ranks) {
      if (!std::binary_search(suspects.begin(), suspects.end(), r.rank)) continue;
      bool matches = condition == ProbeCondition::kRankGone      ? gone(r)
                     : condition == ProbeCondition::kRankStopped ? stopped(r)
                                                                 : stalled(r);
      if (!matches) continue;
      result.ranks.push_back(r.rank);
      result.evidence.push_back(rankLine(r));
    }
    result.ranks = sortedUnique(std::move(result.ranks));
    result.holds = !result.ranks.empty();
    return result;
  }

  ConditionResult evaluateHealthy() {
    const StatusFindings& status = cache_.status(job_, group_.node);
    ConditionResult result;
    if (!status.answered) return result;
    std::vector<uint32_t> ranks;
    for (const RankStatus& r : status.ranks) {
      if (gone(r) || stopped(r) || stalled(r)) return result;
      ranks.push_back(r.rank);
    }
    result.holds = true;
    ranks = sortedUnique(std::move(ranks));
    result.evidence.push_back(ranks.empty() ? std::string("status probe: no ranks of the job there")
                                            : "status probe: " + rankWord(ranks) + " running and reporting");
    return result;
  }

  ConditionResult evaluateHot() {
    const StatusFindings& status = cache_.status(job_, group_.node);
    ConditionResult result;
    if (!status.answered) return result;
    result.holds = status.thermal_alarm;
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "status probe: max temperature %.1f C%s", status.max_temperature_c,
                  status.thermal_alarm ? ", thermal alarm" : "");
    result.evidence.push_back(buffer);
    return result;
  }

  ConditionResult evaluateLog() {
    // From a window before the first symptom: the messages that went
    // missing were sent before anyone timed out waiting for them.
    int64_t window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(rules_.window).count();
    int64_t from = group_.symptoms.front().timestamp_ns - window_ns;
    int64_t to = group_.symptoms.back().timestamp_ns;
    const LogFindings& log = cache_.log(job_, group_.node, from, to);
    ConditionResult result;
    if (!log.answered) return result;
    result.holds = log.pending > 0;
    result.evidence.push_back("log probe: " + std::to_string(log.pending) + " of " + std::to_string(log.entries.size()) +
                              " messages pending");
    return result;
  }

  const FaultAnalyser::Group& group_;
  const FaultRuleBase& rules_;
  ProbeCache& cache_;
  std::string job_;
  double delay_factor_;
  std::chrono::milliseconds stall_after_;
  std::chrono::milliseconds slow_rtt_;
  std::vector<uint32_t> named_ranks_;
};

// The group's fault when `rule` is confirmed. Conditions are checked in the
// rule's order and stop at the first that fails, so a rule that fails on the
// response probe never costs a status or log probe.
std::optional<FaultRecord> probeRule(const FaultRule& rule, const FaultAnalyser::Group& group, GroupProbe& probe) {
  // A rule with nothing to probe would report unconfirmed guesses.
  if (rule.confirm.empty()) return std::nullopt;
  std::vector<std::string> probe_lines;
  std::vector<uint32_t> rank_hits;
  bool any_rank_condition = false;
  std::string words;
  for (ProbeCondition condition : rule.confirm) {
    ConditionResult result = probe.evaluate(condition);
    if (!result.holds) return std::nullopt;
    if (isRankCondition(condition)) {
      any_rank_condition = true;
      rank_hits.insert(rank_hits.end(), result.ranks.begin(), result.ranks.end());
    }
    for (std::string& line : result.evidence) appendUnique(probe_lines, std::move(line));
    words += (words.empty() ? "" : ", ") + std::string(probeConditionName(condition));
  }

  const SymptomRecord& first = group.symptoms.front();
  FaultRecord fault;
  fault.job_id = first.job_id;
  fault.uid = first.uid;
  fault.kind = rule.fault;
  fault.node = group.node;
  // A node that is down cannot say which of its ranks were there, so the
  // ranks are the ones its peers were waiting for.
  if (rule.fault == FaultKind::kNodeDown) fault.ranks = probe.namedRanks();
  else if (isProcessFault(rule.fault) && any_rank_condition) fault.ranks = sortedUnique(std::move(rank_hits));
  else fault.ranks = probe.suspectRanks();

  size_t shown = std::min(group.symptoms.size(), kMaxSymptomLines);
  for (size_t i = 0; i < shown; ++i) fault.evidence.push_back(symptomLine(group.symptoms[i]));
  if (group.symptoms.size() > shown)
    fault.evidence.push_back("... and " + std::to_string(group.symptoms.size() - shown) + " more");
  for (std::string& line : probe_lines) fault.evidence.push_back(std::move(line));
  fault.evidence.push_back("rule " + std::string(faultKindName(rule.fault)) + " at line " + std::to_string(rule.line) +
                           " confirmed: " + words);
  fault.first_symptom_ns = first.timestamp_ns;
  return fault;
}

}  // namespace

std::vector<FaultAnalyser::Group> FaultAnalyser::group(std::vector<SymptomRecord> symptoms,
                                                       size_t* duplicates_dropped) const {
  size_t dropped = 0;
  std::stable_sort(symptoms.begin(), symptoms.end(),
                   [](const SymptomRecord& a, const SymptomRecord& b) { return a.timestamp_ns < b.timestamp_ns; });
  const int64_t window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(rules_.window).count();

  // Purify. In time order, a repeat is measured against the last kept report
  // of the same observation, so a condition that persists is re-reported once
  // per window rather than swallowed for good.
  std::vector<SymptomRecord> kept;
  for (SymptomRecord& s : symptoms) {
    if (suspectNodes(s.suspect_node).empty()) {
      ++dropped;  // about nobody: nothing to localise
      continue;
    }
    bool duplicate = false;
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
      if (!sameObservation(*it, s)) continue;
      duplicate = s.timestamp_ns - it->timestamp_ns <= window_ns;
      break;
    }
    if (duplicate) {
      ++dropped;
      continue;
    }
    kept.push_back(std::move(s));
  }
  if (duplicates_dropped) *duplicates_dropped = dropped;

  std::map<std::string, std::vector<const SymptomRecord*>> by_node;
  for (const SymptomRecord& s : kept)
    for (std::string& node : suspectNodes(s.suspect_node)) by_node[std::move(node)].push_back(&s);

  std::vector<Group> groups;
  for (auto& [node, list] : by_node) {
    int64_t last = 0;
    for (const SymptomRecord* s : list) {
      if (groups.empty() || groups.back().node != node || s->timestamp_ns - last > window_ns)
        groups.push_back({node, {}});
      groups.back().symptoms.push_back(*s);
      last = s->timestamp_ns;
    }
  }
  // Oldest trouble first, so that the faults come out in the order they began.
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return std::tie(a.symptoms.front().timestamp_ns, a.node) < std::tie(b.symptoms.front().timestamp_ns, b.node);
  });
  return groups;
}

FaultAnalyser::Analysis FaultAnalyser::analyse(std::vector<SymptomRecord> symptoms, const std::string& self,
                                               int64_t now_ns) {
  Analysis analysis;
  analysis.groups = group(std::move(symptoms), &analysis.duplicates_dropped);
  ProbeCache cache(prober_, rules_.probe_attempts);
  std::map<std::pair<std::string, FaultKind>, size_t> index;  // (node, kind) -> analysis.faults
  std::vector<size_t> symptom_lines;                            // per fault in analysis.faults

  for (const Group& g : analysis.groups) {
    std::set<SymptomKind> kinds;
    for (const SymptomRecord& s : g.symptoms) kinds.insert(s.kind);
    GroupProbe probe(g, rules_, cache, delay_factor_);
    for (const FaultRule& rule : rules_.rules) {
      bool candidate = std::any_of(rule.when.begin(), rule.when.end(), [&](SymptomKind k) { return kinds.count(k); });
      if (!candidate) continue;
      std::optional<FaultRecord> fault = probeRule(rule, g, probe);
      if (!fault) continue;
      fault->localised_ns = now_ns;
      fault->localised_by = self;
      // Different groups may lead to the same fault (MPFL's note on
      // Algorithm 2): one node's fault is reported once.
      auto [it, fresh] = index.emplace(std::make_pair(fault->node, fault->kind), analysis.faults.size());
      if (fresh) {
        analysis.faults.push_back(std::move(*fault));
        symptom_lines.push_back(symptomLines(g.symptoms.size()));
      } else {
        FaultRecord& merged = analysis.faults[it->second];
        merged.ranks.insert(merged.ranks.end(), fault->ranks.begin(), fault->ranks.end());
        merged.ranks = sortedUnique(std::move(merged.ranks));
        Evidence evidence = mergedEvidence({std::move(merged.evidence), symptom_lines[it->second]},
                                           {std::move(fault->evidence), symptomLines(g.symptoms.size())});
        merged.evidence = std::move(evidence.lines);
        symptom_lines[it->second] = evidence.symptom_lines;
        if (fault->first_symptom_ns < merged.first_symptom_ns) {
          merged.first_symptom_ns = fault->first_symptom_ns;
          merged.job_id = fault->job_id;
          merged.uid = fault->uid;
        }
      }
      break;  // Algorithm 2: the first confirmed hypothesis explains the group
    }
  }
  analysis.probes_sent = cache.sent();
  return analysis;
}

}  // namespace nk
