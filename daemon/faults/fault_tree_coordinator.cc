#include "faults/fault_tree_coordinator.h"

#include <algorithm>
#include <limits>

#include "base/clock.h"
#include "base/signal_name.h"
#include "faults/job_registry.h"
#include "faults/rank_ending.h"
#include "faults/symptom_store.h"

namespace nk {

namespace {

// The tree's order: the node of rank 0 first (the root), then each node by
// its lowest rank, so that every daemon of the job builds the same tree.
std::vector<std::string> treeOrder(const JobRecord& job) {
  std::vector<std::pair<uint32_t, std::string>> by_rank;
  for (const JobNodeRecord& node : job.nodes) {
    uint32_t lowest = std::numeric_limits<uint32_t>::max();
    for (uint32_t r : node.ranks) lowest = std::min(lowest, r);
    by_rank.emplace_back(lowest, node.node);
  }
  std::sort(by_rank.begin(), by_rank.end());
  std::vector<std::string> out;
  for (auto& [rank, node] : by_rank)
    if (std::find(out.begin(), out.end(), node) == out.end()) out.push_back(std::move(node));
  return out;
}

}  // namespace

FaultTreeCoordinator::FaultTreeCoordinator(std::string default_node, JobRegistry& jobs, PeerNetwork& network,
                                           Prober& prober, FaultReportLog& reports,
                                           std::shared_ptr<const FaultRuleBase> rules, Options options)
    : default_node_(std::move(default_node)),
      jobs_(jobs),
      network_(network),
      reports_(reports),
      options_(std::move(options)),
      prober_(prober, SelfAnsweringProber::Self{
                          [this](std::string_view job_id, std::string_view node) { return isSelf(job_id, node); },
                          [this](std::string_view job_id) { return localStatus(std::string(job_id)); },
                          options_.local_log_probe}),
      rules_(std::move(rules)) {}

FaultTreeCoordinator::~FaultTreeCoordinator() { stop(); }

void FaultTreeCoordinator::start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void FaultTreeCoordinator::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<const FaultRuleBase> FaultTreeCoordinator::rules() const {
  std::lock_guard lock(mutex_);
  return rules_;
}

void FaultTreeCoordinator::setRules(std::shared_ptr<const FaultRuleBase> rules) {
  {
    std::lock_guard lock(mutex_);
    rules_ = rules;
  }
  post([this, rules](int64_t) {
    for (auto& [job, tree] : trees_) {
      tree.localiser->setRules(rules);
      tree.watch.setStallAfter(rules->stall_after);
    }
  });
}

void FaultTreeCoordinator::post(Event event) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(event));
  }
  wake_.notify_one();
}

bool FaultTreeCoordinator::overloaded() const {
  std::lock_guard lock(mutex_);
  return queue_.size() > options_.max_queue;
}

std::string FaultTreeCoordinator::selfIn(const std::string& job_id) const {
  std::lock_guard lock(mutex_);
  auto it = selves_.find(job_id);
  return it == selves_.end() ? std::string() : it->second;
}

bool FaultTreeCoordinator::isSelf(std::string_view job_id, std::string_view node) const {
  std::lock_guard lock(mutex_);
  if (!job_id.empty()) {
    auto it = selves_.find(std::string(job_id));
    return it != selves_.end() && it->second == node;
  }
  if (node == default_node_) return true;
  for (const auto& [job, self] : selves_)
    if (self == node) return true;
  return false;
}

bool FaultTreeCoordinator::inTree(const std::string& job_id, const std::string& node) const {
  std::lock_guard lock(mutex_);
  auto it = members_.find(job_id);
  return it != members_.end() && it->second.count(node) > 0;
}

size_t FaultTreeCoordinator::jobCount() const {
  std::lock_guard lock(mutex_);
  return selves_.size();
}

void FaultTreeCoordinator::jobNodesChanged(const std::string& job_id) {
  post([this, job_id](int64_t now_ns) {
    auto job = jobs_.job(job_id);
    if (!job || job->nodes.empty()) return;
    std::string self = job->ranks.empty() ? default_node_ : job->ranks.front().node;
    std::vector<std::string> order = treeOrder(*job);
    if (std::find(order.begin(), order.end(), self) == order.end()) {
      if (options_.log_info)
        options_.log_info("job " + job_id + ": this node (" + self + ") is not in the job's node list; no fault tree");
      return;
    }
    auto existing = trees_.find(job_id);
    if (existing != trees_.end() && existing->second.localiser->tree().nodes() == order &&
        existing->second.localiser->self() == self)
      return;  // the same list again (another rank, or a rank that re-registered)
    auto rules_now = rules();
    FaultLocaliser::Settings settings = options_.localiser;
    settings.on_raised = [this](const SymptomRecord& raised) { listRaised(raised); };
    if (auto delay = options_.scheduling_delay) {
      settings.delay_factor = [delay] { return delay->factor(); };
      settings.heartbeat_delay_factor = [delay] { return delay->threadFactor(); };
    }
    JobTree tree{std::make_unique<FaultLocaliser>(
                     job_id, job->uid, FaultTree(order, options_.fan_out), self, settings, rules_now,
                     network_, prober_, [this](const FaultRecord& fault) { publish(fault); }),
                 LocalRankWatch(rules_now->stall_after), now_ns};
    tree.cancellation = CancellationCheck(options_.cancellation_grace);
    std::map<std::string, std::vector<uint32_t>> node_ranks;
    for (const JobNodeRecord& n : job->nodes) node_ranks[n.node] = n.ranks;
    tree.localiser->setNodeRanks(std::move(node_ranks));
    const FaultTree& shape = tree.localiser->tree();
    if (options_.log_info) {
      std::string parent = tree.localiser->currentParent();
      size_t index = *shape.indexOf(self);
      options_.log_info("job " + job_id + ": fault tree of " + std::to_string(order.size()) + " nodes, fan-out " +
                        std::to_string(shape.fanOut()) + "; this node " + self + " is " +
                        (parent.empty() ? std::string("the root") : "below " + parent) + " with " +
                        std::to_string(shape.children(index).size()) + " children");
    }
    trees_.insert_or_assign(job_id, std::move(tree));
    std::lock_guard lock(mutex_);
    selves_[job_id] = self;
    members_[job_id] = std::set<std::string>(order.begin(), order.end());
  });
}

void FaultTreeCoordinator::detect(SymptomRecord symptom) {
  post([this, symptom = std::move(symptom)](int64_t now_ns) mutable {
    auto it = trees_.find(symptom.job_id);
    if (it == trees_.end()) return;  // no node list yet: the symptom store keeps it
    it->second.localiser->detect(std::move(symptom), now_ns);
  });
}

bool FaultTreeCoordinator::receive(SymptomRecord symptom) {
  if (overloaded()) return false;
  post([this, symptom = std::move(symptom)](int64_t now_ns) mutable {
    auto it = trees_.find(symptom.job_id);
    if (it == trees_.end()) return;
    it->second.last_activity_ns = now_ns;
    if (symptom.kind == SymptomKind::kRankExited && symptom.suspect_node != it->second.localiser->self())
      crashNews(symptom.job_id, it->second, symptom.suspect_node);
    it->second.localiser->receive(std::move(symptom), now_ns);
  });
  return true;
}

bool FaultTreeCoordinator::heartbeat(const std::string& job_id, const std::string& from, bool leaving,
                                     double sender_delay_factor) {
  if (selfIn(job_id).empty()) return false;
  post([this, job_id, from, leaving, sender_delay_factor](int64_t now_ns) {
    auto it = trees_.find(job_id);
    if (it == trees_.end()) return;
    it->second.last_activity_ns = now_ns;
    it->second.localiser->heartbeatFrom(from, leaving, now_ns, sender_delay_factor);
  });
  return true;
}

void FaultTreeCoordinator::listRaised(const SymptomRecord& raised) const {
  if (options_.symptoms) options_.symptoms->append(raised);
}

void FaultTreeCoordinator::crashNews(const std::string& job_id, JobTree& tree, const std::string& node) {
  if (tree.cancellation.crashNews(node)) sayOverruled(job_id, tree);
}

void FaultTreeCoordinator::sayOverruled(const std::string& job_id, JobTree& tree) {
  const auto& overruled = tree.cancellation.overruled();
  if (!overruled || tree.overruled_said) return;
  tree.overruled_said = true;
  if (options_.log_info)
    options_.log_info("job " + job_id + ": rank " + std::to_string(overruled->rank) + " on " + tree.localiser->self() +
                      " ended by " + signalName(overruled->signal) + " after a rank crashed on " +
                      tree.cancellation.crashedOn() + "; not a cancellation");
}

std::optional<FaultRecord> FaultTreeCoordinator::publish(FaultRecord fault) {
  if (fault.kind == FaultKind::kProcessCrash)
    post([this, job_id = fault.job_id, node = fault.node](int64_t) {
      auto it = trees_.find(job_id);
      if (it != trees_.end() && node != it->second.localiser->self()) crashNews(job_id, it->second, node);
    });
  auto published = reports_.publish(std::move(fault));
  if (published && options_.on_published) options_.on_published(*published);
  return published;
}

std::vector<RankStatus> FaultTreeCoordinator::rankStatuses(const std::string& job_id, int64_t now_ns) const {
  std::vector<RankStatus> out;
  auto job = jobs_.job(job_id);
  if (!job) return out;
  // Only a job with a tree here is followed between looks: the tracker
  // forgets a job with its tree, and a probe after that must not refill it.
  const bool followed = !selfIn(job_id).empty();
  for (const RankRecord& rank : job->ranks) {
    RankStatus status;
    status.rank = rank.rank;
    ProcessStatus process = jobs_.statusOf(rank);
    status.state = process.state;
    status.cpu_time = process.cpu_time;
    if (followed) status.cpu_grew_ago = cpu_progress_.look(job_id, rank.rank, rank.pid, process.cpu_time, now_ns);
    status.finalized = rank.finalized;
    // A rank that never reported is as old as its registration.
    int64_t since = rank.last_report_ns > 0 ? rank.last_report_ns : rank.registered_ns;
    if (since > 0) status.report_age = std::chrono::milliseconds(std::max<int64_t>(0, now_ns - since) / 1000000);
    status.current_operation = rank.current_operation;
    status.ending_signal = rank.ending_signal;
    const bool ended = process.state == ProcessState::kGone || process.state == ProcessState::kZombie;
    if (ended && !rank.finalized && status.ending_signal == 0 && options_.ending_signal_left)
      status.ending_signal = options_.ending_signal_left(rank.pid, job->uid);
    out.push_back(std::move(status));
  }
  return out;
}

StatusFindings FaultTreeCoordinator::localStatus(const std::string& job_id) const {
  StatusFindings findings;
  findings.answered = true;
  findings.ranks = rankStatuses(job_id, wallClockNs());
  if (options_.node_state) {
    NodeState state = options_.node_state();
    findings.load = state.load;
    findings.max_temperature_c = state.max_temperature_c;
    findings.thermal_alarm = state.thermal_alarm;
  }
  findings.overloaded = overloaded();
  return findings;
}

void FaultTreeCoordinator::tickAll(int64_t now_ns) {
  NodeState state;
  if (options_.node_state) state = options_.node_state();
  const double delay_factor = options_.scheduling_delay ? options_.scheduling_delay->factor() : 1.0;
  for (auto it = trees_.begin(); it != trees_.end();) {
    const std::string& job_id = it->first;
    JobTree& tree = it->second;
    FaultLocaliser& localiser = *tree.localiser;
    std::vector<RankStatus> ranks = rankStatuses(job_id, now_ns);
    bool any_alive = false;
    for (const RankStatus& r : ranks)
      if (r.state != ProcessState::kGone && r.state != ProcessState::kZombie) any_alive = true;
    if (any_alive) tree.last_activity_ns = now_ns;
    tree.watch.setDelayFactor(delay_factor);
    LocalRankWatch::Outcome outcome =
        tree.watch.check(job_id, localiser.uid(), localiser.self(), ranks, state.thermal_alarm, state.max_temperature_c, now_ns);
    for (SymptomRecord& s : outcome.symptoms) {
      listRaised(s);
      localiser.detect(std::move(s), now_ns);
    }
    if (outcome.cancelled) {
      tree.cancellation.seen(*outcome.cancelled, now_ns);
      sayOverruled(job_id, tree);
    }
    if (auto cancelled = tree.cancellation.confirmed(now_ns, delay_factor);
        cancelled && jobs_.markCancelled(job_id, cancelled->signal, now_ns) && options_.log_info)
      options_.log_info("job " + job_id + ": cancelled (" + signalName(cancelled->signal) + "): rank " +
                        std::to_string(cancelled->rank) + " on " + localiser.self() + " ended by it; not a fault");
    // The job is over here when its ranks finalized, or when none is left
    // (they died: said above as rank_exited). Staying would have this node
    // blamed again for a job that no longer runs on it.
    if (outcome.all_finalized)
      jobs_.markEnded(job_id, JobEnd::kCompleted, "every rank here called MPI_Finalize", now_ns);
    else if (!ranks.empty() && !any_alive)
      jobs_.markEnded(job_id, JobEnd::kFailed, "its ranks here exited without MPI_Finalize", now_ns);
    if (outcome.all_finalized || (!ranks.empty() && !any_alive)) localiser.leave(now_ns);
    localiser.tick(now_ns);
    const int64_t linger = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.linger).count();
    const bool idle = now_ns - tree.last_activity_ns > linger;
    // A cancellation waiting for crash news keeps the tree that hears it.
    if (((localiser.left() && localiser.watched().empty()) || (idle && !any_alive)) && !tree.cancellation.pending()) {
      if (!localiser.left()) localiser.leave(now_ns);
      {
        std::lock_guard lock(mutex_);
        selves_.erase(job_id);
        members_.erase(job_id);
      }
      cpu_progress_.forget(job_id);
      it = trees_.erase(it);
      continue;
    }
    ++it;
  }
}

void FaultTreeCoordinator::run() {
  if (options_.on_thread_start) options_.on_thread_start();
  const auto period = options_.localiser.heartbeat_period;
  auto next_tick = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_tick;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto waited_from = std::chrono::steady_clock::now();
    wake_.wait_until(lock, next_tick, [&] { return stopping_ || !queue_.empty(); });
    const auto woke = std::chrono::steady_clock::now();
    if (stopping_) break;
    std::deque<Event> events;
    events.swap(queue_);
    lock.unlock();
    for (Event& event : events) event(wallClockNs());
    if (std::chrono::steady_clock::now() >= next_tick) {
      auto now = std::chrono::steady_clock::now();
      // How late this thread woke for its tick: the host's scheduling
      // delay, which the fault timeouts allow for. Not the time its own
      // work (events, probes) ran past the tick: that is no one's delay.
      if (options_.scheduling_delay) {
        const auto due = std::max(next_tick, waited_from);
        if (woke >= due) options_.scheduling_delay->tickLate(woke - due, period, wallClockNs());
        if (options_.cpu_pressure) options_.scheduling_delay->cpuPressure(options_.cpu_pressure());
      }
      if (options_.log_debug && last_tick != std::chrono::steady_clock::time_point{})
        options_.log_debug("fault tree: heartbeat period " +
                           std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now - last_tick).count()) +
                           " us");
      last_tick = now;
      tickAll(wallClockNs());
      next_tick = std::chrono::steady_clock::now() + period;
    }
    lock.lock();
  }
}

}  // namespace nk
