#include "faults/fault_localiser.h"

#include <algorithm>
#include <tuple>

#include "faults/scheduling_delay.h"

namespace nk {

namespace {

constexpr size_t kPublishAttempts = 3;

std::vector<std::string> splitNodes(const std::string& joined) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t comma = joined.find(',', start);
    if (comma == std::string::npos) comma = joined.size();
    if (comma > start) out.push_back(joined.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

FaultLocaliser::FaultLocaliser(std::string job_id, uid_t uid, std::shared_ptr<const FaultTree> tree,
                               std::string self, Settings settings, std::shared_ptr<const FaultRuleBase> rules,
                               PeerNetwork& network, Prober& prober, FaultSink report)
    : job_id_(std::move(job_id)),
      uid_(uid),
      tree_(std::move(tree)),
      self_(std::move(self)),
      self_index_(tree_->indexOf(self_).value_or(0)),
      settings_(settings),
      rules_(std::move(rules)),
      network_(network),
      prober_(prober),
      report_(std::move(report)) {}

double FaultLocaliser::delayFactor() const {
  return settings_.delay_factor ? std::max(1.0, settings_.delay_factor()) : 1.0;
}

double FaultLocaliser::heartbeatDelayFactor() const {
  return settings_.heartbeat_delay_factor ? std::max(1.0, settings_.heartbeat_delay_factor()) : delayFactor();
}

int64_t FaultLocaliser::heartbeatTimeoutNs(double delay_factor) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             SchedulingDelay::scale(settings_.heartbeat_misses * settings_.heartbeat_period, delay_factor))
      .count();
}

bool FaultLocaliser::reachable(const std::string& node, int64_t now_ns) const {
  if (down_.count(node)) return false;
  auto it = unreachable_until_.find(node);
  return it == unreachable_until_.end() || it->second <= now_ns;
}

void FaultLocaliser::markUnreachable(const std::string& node, int64_t now_ns) {
  unreachable_until_[node] =
      now_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.unreachable_hold).count();
}

std::string FaultLocaliser::currentParent() const {
  if (self_index_ == tree_->root() && current_parent_.empty()) return "";
  return current_parent_.empty() && self_index_ != tree_->root() ? tree_->name(tree_->parent(self_index_))
                                                                 : current_parent_;
}

SymptomRecord FaultLocaliser::forNode(const SymptomRecord& symptom, const std::string& node) const {
  SymptomRecord copy = symptom;
  copy.suspect_node = node;
  // A symptom about several nodes names ranks on each: each node's copy
  // keeps its own, so that one node's fault does not name another's ranks.
  if (!node_ranks_) return copy;
  if (auto ranks = node_ranks_->find(node); ranks != node_ranks_->end() && !copy.suspect_ranks.empty()) {
    std::vector<uint32_t> own;
    for (uint32_t r : copy.suspect_ranks)
      if (std::find(ranks->second.begin(), ranks->second.end(), r) != ranks->second.end()) own.push_back(r);
    copy.suspect_ranks = std::move(own);
  }
  return copy;
}

bool FaultLocaliser::detect(SymptomRecord symptom, int64_t now_ns) {
  ++counters_.symptoms_detected;
  bool any = false;
  for (const std::string& suspect : splitNodes(symptom.suspect_node)) {
    auto suspect_index = tree_->indexOf(suspect);
    if (!suspect_index) continue;
    any = true;
    if (down_.count(suspect)) continue;  // found down: nothing for TFA to add
    SymptomRecord copy = forNode(symptom, suspect);
    bool taken = false;
    // Algorithm 1: the suspect's FLN if it is available, else its SFLNs in
    // turn, the root last.
    for (size_t localiser : tree_->localisers(*suspect_index)) {
      const std::string& name = tree_->name(localiser);
      if (localiser == self_index_) {
        receive(copy, now_ns);
        taken = true;
        break;
      }
      if (!reachable(name, now_ns)) continue;
      PeerNetwork::Delivery delivery = network_.forwardSymptom(name, copy);
      if (delivery == PeerNetwork::Delivery::kAccepted) {
        ++counters_.symptoms_forwarded;
        taken = true;
        break;
      }
      if (delivery == PeerNetwork::Delivery::kUnreachable) markUnreachable(name, now_ns);
    }
    // No localiser of the suspect took it: the node that saw it analyses
    // it rather than lose it.
    if (!taken) receive(std::move(copy), now_ns);
  }
  return any;
}

bool FaultLocaliser::receive(SymptomRecord symptom, int64_t now_ns) {
  ++counters_.symptoms_received;
  if (overloaded()) {
    ++counters_.symptoms_dropped;
    return false;
  }
  std::vector<std::string> suspects = splitNodes(symptom.suspect_node);
  for (size_t i = 0; i < suspects.size(); ++i) {
    const std::string& suspect = suspects[i];
    if (!tree_->contains(suspect) || down_.count(suspect)) continue;
    SymptomRecord copy = suspects.size() == 1 ? std::move(symptom) : forNode(symptom, suspect);
    copy.suspect_node = suspect;
    auto& held = held_[suspect];
    held.push_back(std::move(copy));
    if (triggers(suspect, held.back(), now_ns)) {
      auto last = last_analysis_ns_.find(suspect);
      const int64_t spacing = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.heartbeat_period).count();
      // A storm of symptoms about one node is analysed once per period,
      // not once per symptom.
      if (last == last_analysis_ns_.end() || now_ns - last->second >= spacing) analyse(suspect, now_ns);
      else due_.insert(suspect);
    }
  }
  return true;
}

bool FaultLocaliser::triggers(const std::string& node, const SymptomRecord& newest, int64_t now_ns) const {
  (void)now_ns;
  if (rules_->trigger_now.count(newest.kind)) return true;
  auto it = held_.find(node);
  if (it == held_.end()) return false;
  const int64_t window = std::chrono::duration_cast<std::chrono::nanoseconds>(rules_->window).count();
  // Distinct reports: the same reporter saying the same thing twice is one.
  std::set<std::tuple<int, std::string, uint32_t, std::string>> distinct;
  for (const SymptomRecord& s : it->second)
    if (newest.timestamp_ns - s.timestamp_ns <= window && s.timestamp_ns - newest.timestamp_ns <= window)
      distinct.emplace(static_cast<int>(s.kind), s.reporter_node, s.reporter_rank, s.operation);
  return distinct.size() >= rules_->trigger_count;
}

void FaultLocaliser::analyse(const std::string& node, int64_t now_ns) {
  due_.erase(node);
  last_analysis_ns_[node] = now_ns;
  auto it = held_.find(node);
  if (it == held_.end() || it->second.empty()) return;
  ++counters_.analyses;
  FaultAnalyser analyser(*rules_, prober_, delayFactor());
  FaultAnalyser::Analysis analysis = analyser.analyse(it->second, self_, now_ns);
  counters_.probes += analysis.probes_sent;
  for (FaultRecord& fault : analysis.faults) {
    held_.erase(fault.node);
    // Said once per kind: a hung rank's waiting peers keep reporting it,
    // and the analysis confirms the same again.
    if (!confirmed_[fault.node].insert(fault.kind).second) continue;
    ++counters_.faults_confirmed;
    if (fault.kind == FaultKind::kNodeDown) down_.insert(fault.node);
    if (settings_.clock) fault.localised_ns = settings_.clock();
    if (fault.uid == 0) fault.uid = uid_;
    if (fault.ranks.empty()) {
      if (node_ranks_) {
        if (auto ranks = node_ranks_->find(fault.node); ranks != node_ranks_->end()) fault.ranks = ranks->second;
      }
    }
    if (fault.job_id.empty()) fault.job_id = job_id_;
    report(std::move(fault), now_ns);
  }
}

void FaultLocaliser::report(FaultRecord fault, int64_t now_ns) {
  for (size_t reporter : tree_->reporters()) {
    const std::string& name = tree_->name(reporter);
    if (reporter == self_index_) {
      publishHere(fault);
      return;
    }
    if (!reachable(name, now_ns)) continue;
    // A root that lost one message is still the root: the report goes
    // elsewhere only when it does not answer again and again, or the users
    // watching rank 0's node would miss it.
    for (size_t attempt = 0; attempt < kPublishAttempts; ++attempt) {
      if (network_.publishFault(name, fault) == PeerNetwork::Delivery::kAccepted) {
        ++counters_.faults_published;
        return;
      }
    }
    markUnreachable(name, now_ns);
  }
}

void FaultLocaliser::publishHere(const FaultRecord& fault) {
  ++counters_.faults_published;
  if (report_) report_(fault);
}

void FaultLocaliser::heartbeatFrom(const std::string& node, bool leaving, int64_t now_ns, double sender_delay_factor) {
  if (!tree_->contains(node) || node == self_) return;
  unreachable_until_.erase(node);
  if (leaving) {
    watched_.erase(node);
    return;
  }
  Watched& w = watched_[node];
  w.last_heard_ns = now_ns;
  w.suspected = false;
  w.sender_delay_factor = std::clamp(sender_delay_factor, 1.0, 10.0);
}

void FaultLocaliser::sendHeartbeat(int64_t now_ns, bool leaving) {
  last_heartbeat_ns_ = now_ns;
  // The FLN, then the SFLNs; when every ancestor is gone, whoever reports
  // in the root's place, so that this node stays watched. Walked, not
  // listed: at 10,000 nodes a list per heartbeat would cost more than the
  // heartbeat.
  const std::vector<size_t> ancestors = tree_->ancestors(self_index_);
  const size_t candidates = ancestors.size() + tree_->size();
  for (size_t k = 0; k < candidates; ++k) {
    size_t target = k < ancestors.size() ? ancestors[k] : k - ancestors.size();
    if (k >= ancestors.size() &&
        (target == self_index_ || std::find(ancestors.begin(), ancestors.end(), target) != ancestors.end()))
      continue;
    const std::string& name = tree_->name(target);
    if (!reachable(name, now_ns)) continue;
    ++counters_.heartbeats_sent;
    PeerNetwork::Delivery delivery = network_.heartbeat(name, job_id_, self_, leaving);
    if (delivery != PeerNetwork::Delivery::kUnreachable) {
      if (current_parent_ != name) current_parent_ = name;
      missed_heartbeats_ = 0;
      lost_before_.erase(name);
      return;
    }
    // A localiser that was lost before and still does not answer is passed
    // over at once; a first loss waits for `heartbeat_misses` periods.
    if (!lost_before_.count(name) && !leaving) {
      current_parent_ = name;
      if (++missed_heartbeats_ < settings_.heartbeat_misses) return;
      missed_heartbeats_ = 0;
      lost_before_.insert(name);
      markUnreachable(name, now_ns);
      detect(heartbeatLost(name, now_ns,
                           "its child " + self_ + " got no answer to " +
                               std::to_string(settings_.heartbeat_misses) + " heartbeats"),
             now_ns);
      continue;  // and heartbeat to the next localiser (SFLN) now
    }
    markUnreachable(name, now_ns);
  }
}

SymptomRecord FaultLocaliser::heartbeatLost(const std::string& suspect, int64_t timestamp_ns,
                                            std::string detail) const {
  SymptomRecord lost;
  lost.job_id = job_id_;
  lost.uid = uid_;
  lost.kind = SymptomKind::kHeartbeatLost;
  lost.reporter_node = self_;
  lost.reporter_rank = kDaemonReporter;
  lost.suspect_node = suspect;
  lost.timestamp_ns = timestamp_ns;
  lost.detail = std::move(detail);
  if (settings_.on_raised) settings_.on_raised(lost);
  return lost;
}

void FaultLocaliser::watchHeartbeats(int64_t now_ns) {
  const double own_factor = heartbeatDelayFactor();
  for (auto& [node, w] : watched_) {
    const double factor = std::max(own_factor, w.sender_delay_factor);
    if (w.suspected || now_ns - w.last_heard_ns <= heartbeatTimeoutNs(factor)) continue;
    w.suspected = true;
    const int64_t first_missed =
        w.last_heard_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.heartbeat_period).count();
    std::string detail = "no heartbeat for " + std::to_string((now_ns - w.last_heard_ns) / 1000000) + " ms";
    if (factor > 1.0)
      detail += " (timeout " +
                SchedulingDelay::describe(std::chrono::duration_cast<std::chrono::milliseconds>(
                                              settings_.heartbeat_misses * settings_.heartbeat_period),
                                          factor) +
                ")";
    detect(heartbeatLost(node, first_missed, std::move(detail)), now_ns);
  }
}

void FaultLocaliser::dropOld(int64_t now_ns) {
  // Symptoms stay long enough to meet later ones in a window, not longer.
  const int64_t keep = std::max<int64_t>(
      10'000'000'000LL, 5 * std::chrono::duration_cast<std::chrono::nanoseconds>(rules_->window).count());
  for (auto it = held_.begin(); it != held_.end();) {
    auto& symptoms = it->second;
    symptoms.erase(std::remove_if(symptoms.begin(), symptoms.end(),
                                  [&](const SymptomRecord& s) { return now_ns - s.timestamp_ns > keep; }),
                   symptoms.end());
    it = symptoms.empty() ? held_.erase(it) : std::next(it);
  }
}

void FaultLocaliser::tick(int64_t now_ns) {
  const int64_t period = std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.heartbeat_period).count();
  if (!left_ && self_index_ != tree_->root() && now_ns - last_heartbeat_ns_ >= period) sendHeartbeat(now_ns, false);
  watchHeartbeats(now_ns);
  for (const std::string& node : std::vector<std::string>(due_.begin(), due_.end())) analyse(node, now_ns);
  dropOld(now_ns);
}

void FaultLocaliser::leave(int64_t now_ns) {
  if (left_) return;
  left_ = true;
  if (self_index_ != tree_->root()) sendHeartbeat(now_ns, true);
}

std::vector<std::string> FaultLocaliser::watched() const {
  std::vector<std::string> out;
  for (const auto& [node, w] : watched_) out.push_back(node);
  return out;
}

size_t FaultLocaliser::heldCount() const {
  size_t n = 0;
  for (const auto& [node, symptoms] : held_) n += symptoms.size();
  return n;
}

}  // namespace nk
