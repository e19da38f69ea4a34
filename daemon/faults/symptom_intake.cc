#include "faults/symptom_intake.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include "base/single_quoted.h"
#include "faults/peer_network.h"

namespace nk {

namespace {

// "unix:///run/x.sock" and "unix:/run/./x.sock" are "unix:/run/x.sock":
// endpoints are compared to tell this daemon from the others.
std::string normalEndpoint(std::string_view endpoint) {
  std::string_view path;
  if (endpoint.rfind("unix://", 0) == 0) path = endpoint.substr(7);
  else if (endpoint.rfind("unix:", 0) == 0) path = endpoint.substr(5);
  else return std::string(endpoint);
  return "unix:" + std::filesystem::path(path).lexically_normal().string();
}

Status checkText(const std::string& text, const char* field, size_t limit) {
  if (text.size() > limit)
    return invalidArgument(std::string(field) + " is longer than " + std::to_string(limit) + " bytes");
  return {};
}

Status checkRanks(const std::vector<uint32_t>& ranks, const char* field, uint32_t size, std::string_view job_id) {
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] >= size)
      return invalidArgument(std::string(field) + "[" + std::to_string(i) + "] is rank " + std::to_string(ranks[i]) +
                             ", but job " + singleQuoted(job_id) + " has size " + std::to_string(size));
  return {};
}

// The job's node for each rank: the node list, then ranks registered here.
std::unordered_map<uint32_t, std::string> nodeOfRanks(const JobRecord& job) {
  std::unordered_map<uint32_t, std::string> nodes;
  for (const auto& n : job.nodes)
    for (uint32_t r : n.ranks) nodes.emplace(r, n.node);
  for (const auto& r : job.ranks) nodes.emplace(r.rank, r.node);
  return nodes;
}

// One node, or several comma-joined, in the order of the ranks.
std::string joinNodes(const std::vector<std::string>& nodes) {
  std::vector<std::string> distinct;
  for (const auto& n : nodes)
    if (!n.empty() && std::find(distinct.begin(), distinct.end(), n) == distinct.end()) distinct.push_back(n);
  std::string out;
  for (const auto& n : distinct) out += (out.empty() ? "" : ",") + n;
  return out;
}

// A suspect the job's node list does not know could never be localised.
Status checkSuspectNodes(std::string_view named, const JobRecord& job) {
  if (named.empty() || job.nodes.empty()) return {};
  while (!named.empty()) {
    size_t comma = named.find(',');
    std::string_view node = named.substr(0, comma);
    const bool known = node.empty() || std::any_of(job.nodes.begin(), job.nodes.end(),
                                                   [&](const JobNodeRecord& n) { return n.node == node; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& n : job.nodes) names.push_back(n.node);
      return invalidArgument("suspect_node " + singleQuoted(node) + " is not a node of job " +
                             singleQuoted(job.job_id) + " (its nodes: " + joinNodes(names) + ")");
    }
    named = comma == std::string_view::npos ? std::string_view() : named.substr(comma + 1);
  }
  return {};
}

}  // namespace

SymptomIntake::SymptomIntake(const JobRegistry& jobs, PeerNetwork& network, Options options)
    : jobs_(jobs), network_(network), options_(std::move(options)) {
  options_.own_endpoint = normalEndpoint(options_.own_endpoint);
}

void SymptomIntake::warn(const std::string& message) const {
  if (options_.log_warning) options_.log_warning(message);
}

Result<SymptomRecord> SymptomIntake::take(SymptomRecord reported, std::optional<pid_t> caller_pid, int64_t now_ns) {
  if (reported.job_id.empty()) return invalidArgument("job_id is empty");
  const int kind = static_cast<int>(reported.kind);
  if (!isKnownSymptomKind(kind))
    return invalidArgument("kind " + std::to_string(kind) + " is not a symptom kind (RESPONSE_TIMEOUT, MPI_ERROR, ...)");
  for (Status s : {checkText(reported.reporter_node, "reporter_node", kMaxTextBytes),
                   checkText(reported.suspect_node, "suspect_node", kMaxTextBytes),
                   checkText(reported.operation, "operation", kMaxTextBytes),
                   checkText(reported.communicator, "communicator", kMaxTextBytes),
                   checkText(reported.detail, "detail", kMaxDetailBytes)})
    if (!s) return s.error();
  if (caller_pid) {
    if (Status s = jobs_.checkCaller(reported.job_id, reported.reporter_rank, *caller_pid); !s) return s.error();
  }
  auto job = jobs_.job(reported.job_id);
  if (!job)
    return notFound("no job " + singleQuoted(reported.job_id) +
                    " is registered at this daemon (its ranks call RegisterRank first)");
  if (Status s = check(reported, *job); !s) return s.error();

  SymptomRecord symptom = std::move(reported);
  symptom.symptom_id = 0;
  symptom.uid = job->uid;
  if (symptom.timestamp_ns == 0) symptom.timestamp_ns = now_ns;
  if (symptom.reporter_node.empty()) {
    auto node_of = nodeOfRanks(*job);
    if (auto it = node_of.find(symptom.reporter_rank); it != node_of.end()) symptom.reporter_node = it->second;
  }

  const bool in_collective = symptom.kind == SymptomKind::kResponseTimeout && !symptom.communicator.empty() &&
                             symptom.collective_seq > 0 && !symptom.communicator_members.empty();
  if (in_collective) {
    findLaggards(*job, symptom, now_ns);
  } else if (symptom.suspect_node.empty() && !symptom.suspect_ranks.empty()) {
    // Point to point: the agent knows the peer; only its node is looked up.
    auto node_of = nodeOfRanks(*job);
    std::vector<std::string> nodes;
    for (uint32_t r : symptom.suspect_ranks)
      if (auto it = node_of.find(r); it != node_of.end()) nodes.push_back(it->second);
    symptom.suspect_node = joinNodes(nodes);
  }
  return symptom;
}

Status SymptomIntake::check(const SymptomRecord& reported, const JobRecord& job) const {
  if (reported.reporter_rank >= job.size)
    return invalidArgument("reporter_rank " + std::to_string(reported.reporter_rank) + " is not below the size " +
                           std::to_string(job.size) + " of job " + singleQuoted(job.job_id));
  for (Status s : {checkRanks(reported.suspect_ranks, "suspect_ranks", job.size, job.job_id),
                   checkRanks(reported.communicator_members, "communicator_members", job.size, job.job_id)})
    if (!s) return s;
  return checkSuspectNodes(reported.suspect_node, job);
}

std::vector<MemberState> SymptomIntake::gatherStates(const JobRecord& job, const std::set<uint32_t>& members,
                                                     int64_t now_ns) {
  std::vector<MemberState> states;
  std::set<uint32_t> known;
  // Ranks registered here said how this daemon is reached: those endpoints
  // are this daemon, whatever spelling its own socket path has.
  std::set<std::string> own = {options_.own_endpoint};
  if (!options_.peer_endpoint.empty()) own.insert(options_.peer_endpoint);
  for (const RankRecord& rank : job.ranks) {
    if (!rank.endpoint.empty()) own.insert(normalEndpoint(rank.endpoint));
    MemberState state;
    state.rank = rank.rank;
    state.node = rank.node;
    state.communicators = rank.communicators;
    if (rank.last_report_ns > 0) state.report_age = std::chrono::nanoseconds(now_ns - rank.last_report_ns);
    state.process_state = std::string(processStateName(jobs_.stateOf(rank)));
    states.push_back(std::move(state));
    known.insert(rank.rank);
  }

  std::vector<JobNodeRecord> asked;
  for (const JobNodeRecord& node : job.nodes) {
    if (own.count(normalEndpoint(node.endpoint))) continue;
    bool wanted = std::any_of(node.ranks.begin(), node.ranks.end(),
                              [&](uint32_t r) { return members.count(r) && !known.count(r); });
    if (wanted) asked.push_back(node);
  }
  if (asked.empty()) return states;
  std::vector<Result<PeerProgress>> answers = network_.rankProgress(job.job_id, asked, options_.peer_timeout);

  for (size_t i = 0; i < asked.size(); ++i) {
    const JobNodeRecord& node = asked[i];
    if (i >= answers.size() || !answers[i]) {
      const std::string why = i < answers.size() ? answers[i].error().message : "no answer";
      warn("job " + job.job_id + ": the daemon of node " + node.node + " at " + node.endpoint +
           " did not answer RankProgress: " + why + "; its ranks count as unreachable");
      for (uint32_t r : node.ranks)
        if (members.count(r) && !known.count(r)) states.push_back({r, node.node, {}, std::nullopt, "unreachable"});
      continue;
    }
    const PeerProgress& answer = *answers[i];
    const int64_t remote_now = answer.now_ns != 0 ? answer.now_ns : now_ns;
    for (const PeerRankProgress& rank : answer.ranks) {
      if (!members.count(rank.rank) || known.count(rank.rank)) continue;
      MemberState state;
      state.rank = rank.rank;
      state.node = rank.node.empty() ? node.node : rank.node;
      state.communicators = rank.communicators;
      if (rank.last_report_ns > 0)
        state.report_age = std::chrono::nanoseconds(std::max<int64_t>(0, remote_now - rank.last_report_ns));
      state.process_state = rank.process_state;
      states.push_back(std::move(state));
    }
  }
  return states;
}

void SymptomIntake::findLaggards(const JobRecord& job, SymptomRecord& symptom, int64_t now_ns) {
  std::set<uint32_t> members(symptom.communicator_members.begin(), symptom.communicator_members.end());
  members.erase(symptom.reporter_rank);
  std::vector<MemberState> states = gatherStates(job, members, now_ns);
  // An agent sends its heartbeats from the thread that also reports its
  // symptoms, and a report may wait up to peer_timeout here: that much more
  // silence is no sign of a stuck rank.
  LaggardFinder finder(options_.heartbeat_period * options_.stale_periods + options_.peer_timeout);
  CollectiveTimeout timeout{symptom.communicator, symptom.collective_seq, symptom.communicator_members,
                            symptom.reporter_rank};
  LaggardFindings findings = finder.find(timeout, states);

  auto node_of = nodeOfRanks(job);
  std::vector<std::string> nodes;
  std::string named;
  symptom.suspect_ranks.clear();
  for (size_t i = 0; i < findings.laggards.size(); ++i) {
    Laggard& l = findings.laggards[i];
    if (l.node.empty()) {
      auto it = node_of.find(l.rank);
      if (it != node_of.end()) l.node = it->second;
    }
    symptom.suspect_ranks.push_back(l.rank);
    nodes.push_back(l.node);
    if (i < kLaggardsInDetail)
      named += (named.empty() ? "" : "; ") + std::to_string(l.rank) + "@" + (l.node.empty() ? "?" : l.node) + " " +
               l.reason;
  }
  if (findings.laggards.size() > kLaggardsInDetail)
    named += "; and " + std::to_string(findings.laggards.size() - kLaggardsInDetail) + " more";
  symptom.suspect_node = joinNodes(nodes);
  std::string verdict = findings.laggards.empty() ? "every member known has entered collective " +
                                                        std::to_string(symptom.collective_seq) + " of " +
                                                        symptom.communicator + " and reports progress"
                                                  : "not arrived: " + named;
  if (!findings.unknown.empty())
    verdict += std::string("; no daemon reported rank") + (findings.unknown.size() > 1 ? "s " : " ") +
               formatRankList(findings.unknown) +
               (job.nodes.empty() ? " (this daemon has no node list for the job: SetJobNodes)" : "");
  symptom.detail += (symptom.detail.empty() ? "" : "; ") + verdict;
}

}  // namespace nk
