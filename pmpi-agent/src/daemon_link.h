#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/unanswered_spell.h"

namespace grpc {
class Status;
}

namespace nk::pmpi {

// What the agent tells its node's daemon, in plain values (the gRPC
// translation stays in daemon_link.cc).
struct RankRegistration {
  std::string job_id;
  uint32_t rank = 0, size = 0;
  std::string node, endpoint;
  int32_t pid = 0;
};
struct JobNodeEntry {
  std::string node, endpoint;
  std::vector<uint32_t> ranks;
};
// What a rank learns of its job at MPI_Init.
struct JobLayout {
  std::string job_id;  // rank 0's
  bool node_leader = true;  // the lowest rank of its node's daemon
  std::vector<JobNodeEntry> nodes;  // given by node leaders only
  std::string nodes_from;  // "pmix" or "mpi" (a PMPI_Allgather)
};
struct SymptomReport {
  enum class Kind { kResponseTimeout, kMpiError };
  Kind kind = Kind::kResponseTimeout;
  std::string operation;
  std::vector<uint32_t> suspect_ranks;
  int32_t error_code = 0;
  std::string detail;
  std::string communicator;
  uint64_t collective_seq = 0;
  std::vector<uint32_t> communicator_members;
  double waited_s = 0;
  int64_t timestamp_ns = 0;
};
struct ProgressSnapshot {
  std::vector<std::pair<std::string, uint64_t>> communicators;
  std::string current_operation;
  int ending_signal = 0;  // see EndingSignals
};

// The agent's one background thread: registers the rank (and, on rank 0,
// the job's nodes), sends queued symptoms and a progress heartbeat every
// period. The MPI calls never wait for it. Without a daemon, or when it
// dies, the job runs on, said once on stderr; registration is retried.
class DaemonLink {
 public:
  // A daemon that answers nothing in time for `quiet_for` is taken for gone;
  // until then a late answer is retried quietly (a busy node answers late).
  static constexpr std::chrono::milliseconds kDefaultQuietFor{5000};
  DaemonLink(std::string socket_path, std::chrono::milliseconds heartbeat, std::function<ProgressSnapshot()> progress,
             std::chrono::milliseconds quiet_for = kDefaultQuietFor);
  ~DaemonLink();
  DaemonLink(const DaemonLink&) = delete;
  DaemonLink& operator=(const DaemonLink&) = delete;

  // `speaks`: this rank says on stderr what happens to the link (the
  // lowest rank of each node does, so a job says it once per node).
  // `nodes_from`: how the node list was learnt ("pmix", "mpi").
  void start(RankRegistration registration, std::vector<JobNodeEntry> job_nodes, std::string nodes_from, bool speaks);
  // Queued (at most a thousand waiting; more are counted and dropped).
  void report(SymptomReport symptom);
  // A progress report now, out of turn (the rank is ending by a signal):
  // true when the daemon took it within `deadline`. False at once when the
  // link has no daemon.
  bool reportProgressNow(std::chrono::milliseconds deadline);
  // Sends what is queued within about `grace`, then ends the thread.
  // `finalized`: the last progress report says the rank called
  // MPI_Finalize, so its daemon takes its end for a normal one.
  void stop(std::chrono::milliseconds grace, bool finalized = false);

  // What the node's daemon calls its node and where other daemons reach
  // it (PeerInfo), asked once at MPI_Init before the ranks exchange their
  // nodes; empty fields when there is no daemon or it does not answer
  // within `timeout`.
  struct PeerInfo {
    std::string node, endpoint;
  };
  static PeerInfo peerInfo(const std::string& socket_path, std::chrono::milliseconds timeout);

  struct Rpc;

 private:
  void run();
  bool connected();
  void handleFailure(const grpc::Status& failure, std::chrono::steady_clock::time_point now);
  void say(const std::string& line);

  const std::string socket_path_;
  const std::chrono::milliseconds heartbeat_;
  const std::function<ProgressSnapshot()> progress_;
  RankRegistration registration_;
  std::vector<JobNodeEntry> job_nodes_;
  std::string nodes_from_;
  std::unique_ptr<Rpc> rpc_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<SymptomReport> queue_;
  uint64_t dropped_ = 0;
  bool stopping_ = false;
  bool finalized_ = false;
  bool registered_ = false;
  bool said_absent_ = false, said_lost_ = false;
  bool restarted_ = false;  // the daemon answered NOT_FOUND: it restarted without the job
  UnansweredSpell unanswered_;
  bool register_retry_soon_ = false;  // registration was not answered in time
  std::chrono::steady_clock::time_point next_attempt_;  // of registration
  bool speaks_ = true;
  // reportProgressNow: asked for up to `urgent_asked_`, sent (or given up)
  // up to `urgent_done_`; `urgent_sent_`: the last one got through.
  uint64_t urgent_asked_ = 0, urgent_done_ = 0;
  bool urgent_sent_ = false;
  std::condition_variable urgent_answered_;
};

}  // namespace nk::pmpi
