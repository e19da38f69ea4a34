#include "daemon_link.h"

#include <sys/stat.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include "nodekeeper/v1/faults.grpc.pb.h"

namespace v1 = nodekeeper::v1;

namespace nk::pmpi {

namespace {

constexpr size_t kMaxQueued = 1000;
constexpr auto kRpcDeadline = std::chrono::milliseconds(1000);

// Not answered in time: the daemon is busy, or this rank was stopped while
// it waited (the deadline is wall-clock time). Such calls are retried
// quietly; a refusal (no socket, connection refused) is not waited out.
bool notAnsweredInTime(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         status.error_code() == grpc::StatusCode::CANCELLED ||
         status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
}

std::string describe(const grpc::Status& status) {
  return status.error_message().empty() ? "gRPC code " + std::to_string(status.error_code()) : status.error_message();
}

std::unique_ptr<grpc::ClientContext> contextWithDeadline() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + kRpcDeadline);
  return context;
}

}  // namespace

struct DaemonLink::Rpc {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::FaultsService::Stub> stub;
};

DaemonLink::DaemonLink(std::string socket_path, std::chrono::milliseconds heartbeat,
                       std::function<ProgressSnapshot()> progress, std::chrono::milliseconds quiet_for)
    : socket_path_(std::move(socket_path)),
      heartbeat_(heartbeat),
      progress_(std::move(progress)),
      unanswered_(quiet_for) {}

DaemonLink::~DaemonLink() { stop(std::chrono::milliseconds(500)); }

void DaemonLink::start(RankRegistration registration, std::vector<JobNodeEntry> job_nodes, std::string nodes_from,
                       bool speaks) {
  nodes_from_ = std::move(nodes_from);
  speaks_ = speaks;
  registration_ = std::move(registration);
  job_nodes_ = std::move(job_nodes);
  thread_ = std::thread([this] { run(); });
}

void DaemonLink::report(SymptomReport symptom) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= kMaxQueued) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(symptom));
  }
  wake_.notify_all();
}

bool DaemonLink::reportProgressNow(std::chrono::milliseconds deadline) {
  std::unique_lock lock(mutex_);
  if (stopping_ || !thread_.joinable()) return false;
  const uint64_t mine = ++urgent_asked_;
  wake_.notify_all();
  if (!urgent_answered_.wait_for(lock, deadline, [&] { return urgent_done_ >= mine; })) return false;
  return urgent_sent_;
}

DaemonLink::PeerInfo DaemonLink::peerInfo(const std::string& socket_path, std::chrono::milliseconds timeout) {
  PeerInfo info;
  struct stat st {};
  if (socket_path.empty() || ::stat(socket_path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return info;
  auto stub = v1::FaultsService::NewStub(grpc::CreateChannel("unix:" + socket_path, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::PeerInfoResponse reply;
  if (stub->PeerInfo(&context, v1::PeerInfoRequest(), &reply).ok()) {
    info.node = reply.node();
    info.endpoint = reply.endpoint();
  }
  return info;
}

void DaemonLink::stop(std::chrono::milliseconds grace, bool finalized) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !thread_.joinable()) return;
    stopping_ = true;
    finalized_ = finalized;
  }
  wake_.notify_all();
  // The RPCs have deadlines of their own: the join is bounded by them.
  (void)grace;
  thread_.join();
}

void DaemonLink::say(const std::string& line) {
  if (!speaks_) return;
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

// A channel once the socket exists; registration (and rank 0's node list)
// before anything else is sent.
bool DaemonLink::connected() {
  if (registered_) return true;
  struct stat st {};
  if (::stat(socket_path_.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
    if (!said_absent_) {
      said_absent_ = true;
      say("nodekeeper-pmpi: nodekeeperd not reachable at " + socket_path_ +
          " (no socket); the job's ranks on node " + registration_.node + " run on without fault detection");
    }
    return false;
  }
  if (!rpc_) {
    rpc_ = std::make_unique<Rpc>();
    rpc_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
    rpc_->stub = v1::FaultsService::NewStub(rpc_->channel);
  }
  v1::RegisterRankRequest request;
  request.set_job_id(registration_.job_id);
  request.set_rank(registration_.rank);
  request.set_size(registration_.size);
  request.set_node(registration_.node);
  request.set_pid(registration_.pid);
  request.set_endpoint(registration_.endpoint);
  v1::RegisterRankResponse response;
  auto context = contextWithDeadline();
  grpc::Status status = rpc_->stub->RegisterRank(context.get(), request, &response);
  if (!status.ok()) {
    if (notAnsweredInTime(status) && !unanswered_.unanswered(std::chrono::steady_clock::now())) {
      register_retry_soon_ = true;
      return false;
    }
    if (!said_absent_) {
      said_absent_ = true;
      say("nodekeeper-pmpi: nodekeeperd at " + socket_path_ + " did not register rank " +
          std::to_string(registration_.rank) + " (" + describe(status) + "); it runs on without fault detection");
    }
    return false;
  }
  if (!job_nodes_.empty()) {
    v1::SetJobNodesRequest nodes;
    nodes.set_job_id(registration_.job_id);
    nodes.set_source(nodes_from_);
    for (const JobNodeEntry& n : job_nodes_) {
      v1::JobNode* node = nodes.add_nodes();
      node->set_node(n.node);
      node->set_endpoint(n.endpoint);
      for (uint32_t r : n.ranks) node->add_ranks(r);
    }
    v1::SetJobNodesResponse ignored;
    auto nodes_context = contextWithDeadline();
    grpc::Status s = rpc_->stub->SetJobNodes(nodes_context.get(), nodes, &ignored);
    if (!s.ok()) say("nodekeeper-pmpi: nodekeeperd refused the job's node list: " + s.error_message());
  }
  registered_ = true;
  unanswered_.answered();
  if (said_lost_ || restarted_) {
    // A daemon that restarted knows nothing of the job: it has it again
    // (news even when the restart was too quick to be seen as a loss: what
    // the daemon knew of the job before is gone).
    said_lost_ = false;
    restarted_ = false;
    say("nodekeeper-pmpi: rank " + std::to_string(registration_.rank) + " registered again with nodekeeperd at " +
        socket_path_);
  } else if (said_absent_) {
    say("nodekeeper-pmpi: rank " + std::to_string(registration_.rank) + " registered with nodekeeperd");
  }
  return true;
}

// What did not get through stays queued either way. A daemon that is only
// slow keeps the registration and is tried again at the next heartbeat,
// saying nothing; one that restarted without the job (NOT_FOUND) is
// registered with again at once; one that is gone is said lost, once.
void DaemonLink::handleFailure(const grpc::Status& failure, std::chrono::steady_clock::time_point now) {
  const auto after = std::chrono::steady_clock::now();
  const bool late = notAnsweredInTime(failure);
  if (late && !unanswered_.unanswered(after)) return;
  registered_ = false;
  if (failure.error_code() == grpc::StatusCode::NOT_FOUND) {
    restarted_ = true;
    next_attempt_ = after;
    return;
  }
  if (!said_lost_) {
    said_lost_ = true;
    const std::string why =
        late ? "no answer for " + std::to_string(unanswered_.seconds(after)) + " s" : describe(failure);
    say("nodekeeper-pmpi: lost nodekeeperd at " + socket_path_ + " (" + why + "); rank " +
        std::to_string(registration_.rank) + " runs on without fault detection until it is back");
  }
  rpc_.reset();
  next_attempt_ = now + std::chrono::seconds(1);
}

void DaemonLink::run() {
  std::unique_lock lock(mutex_);
  auto next_heartbeat = std::chrono::steady_clock::now();
  next_attempt_ = next_heartbeat;
  while (true) {
    bool stopping = stopping_;
    const uint64_t urgent = urgent_asked_ > urgent_done_ ? urgent_asked_ : 0;
    bool urgent_sent = false;
    std::deque<SymptomReport> pending;
    pending.swap(queue_);
    lock.unlock();

    auto now = std::chrono::steady_clock::now();
    bool up = registered_;
    if (!up && now >= next_attempt_) {
      register_retry_soon_ = false;
      up = connected();
      if (!up) next_attempt_ = now + (register_retry_soon_ ? heartbeat_ : std::chrono::milliseconds(2000));
    }
    bool failed = false, answered = false;
    grpc::Status failure;
    std::deque<SymptomReport> unsent;
    // Kept for when the daemon is back (bounded, like the queue).
    if (!up) unsent.swap(pending);
    if (up) {
      for (const SymptomReport& s : pending) {
        if (failed) {
          unsent.push_back(s);
          continue;
        }
        v1::Symptom symptom;
        symptom.set_job_id(registration_.job_id);
        symptom.set_kind(s.kind == SymptomReport::Kind::kResponseTimeout ? v1::SYMPTOM_KIND_RESPONSE_TIMEOUT
                                                                          : v1::SYMPTOM_KIND_MPI_ERROR);
        symptom.set_reporter_node(registration_.node);
        symptom.set_reporter_rank(registration_.rank);
        for (uint32_t r : s.suspect_ranks) symptom.add_suspect_ranks(r);
        symptom.set_operation(s.operation);
        symptom.set_error_code(s.error_code);
        symptom.set_timestamp_ns(s.timestamp_ns);
        symptom.set_detail(s.detail);
        symptom.set_communicator(s.communicator);
        symptom.set_collective_seq(s.collective_seq);
        for (uint32_t r : s.communicator_members) symptom.add_communicator_members(r);
        symptom.set_waited_s(s.waited_s);
        v1::ReportSymptomResponse ignored;
        auto context = contextWithDeadline();
        grpc::Status status = rpc_->stub->ReportSymptom(context.get(), symptom, &ignored);
        if (!status.ok()) {
          failed = true;
          failure = status;
          unsent.push_back(s);
        } else {
          answered = true;
        }
      }
      if (!failed && (now >= next_heartbeat || stopping || urgent)) {
        ProgressSnapshot snapshot = progress_();
        v1::ProgressReport report;
        report.set_job_id(registration_.job_id);
        report.set_rank(registration_.rank);
        for (const auto& [id, n] : snapshot.communicators) {
          v1::CommProgress* c = report.add_communicators();
          c->set_communicator(id);
          c->set_collectives_entered(n);
        }
        report.set_current_operation(snapshot.current_operation);
        report.set_finalized(stopping && finalized_);
        report.set_ending_signal(snapshot.ending_signal);
        report.set_timestamp_ns(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count());
        v1::ReportProgressResponse ignored;
        auto context = contextWithDeadline();
        grpc::Status status = rpc_->stub->ReportProgress(context.get(), report, &ignored);
        if (!status.ok()) {
          failed = true;
          failure = status;
        } else {
          answered = true;
          urgent_sent = urgent != 0;
        }
        next_heartbeat = now + heartbeat_;
      }
      if (answered) unanswered_.answered();
      if (failed) handleFailure(failure, now);
    }
    lock.lock();
    if (urgent) {
      // Sent, failed, or no daemon: the one waiting goes on either way.
      urgent_done_ = urgent;
      urgent_sent_ = urgent_sent;
      urgent_answered_.notify_all();
    }
    while (!unsent.empty()) {
      if (queue_.size() < 1000) queue_.push_front(std::move(unsent.back()));
      else ++dropped_;
      unsent.pop_back();
    }
    if (stopping) return;
    // Not registered: nothing to do before the next attempt (the heartbeat
    // time has passed unsent; waiting for it would spin).
    if (!registered_)
      wake_.wait_until(lock, next_attempt_, [&] { return stopping_ || urgent_asked_ > urgent_done_; });
    else if (queue_.empty())
      wake_.wait_until(lock, next_heartbeat, [&] { return stopping_ || urgent_asked_ > urgent_done_; });
  }
}

}  // namespace nk::pmpi
