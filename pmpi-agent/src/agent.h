#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "agent_options.h"
#include "comm_registry.h"
#include "daemon_link.h"
#include "deadline_policy.h"
#include "deadline_watch.h"
#include "ending_signals.h"
#include "pmix_job.h"
#include "wire/message_log.h"
#include "request_registry.h"

namespace nk::pmpi {

// MPI handles as integers for the registries, whatever the MPI library
// makes them (pointers in Open MPI, ints in MPICH).
template <typename Handle>
uint64_t handleOf(Handle h) {
  if constexpr (std::is_pointer_v<Handle>)
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(h));
  else
    return static_cast<uint64_t>(h);
}

// The agent inside one rank. The generated wrappers (pmpi_wrappers.cc)
// call it around every MPI call they intercept: a blocking point-to-point
// call is issued in its nonblocking form and completed here by a PMPI_Test
// loop with a deadline, a blocking collective runs as itself with its
// deadline watched from the agent's thread; at the deadline a response timeout goes to the daemon naming
// the peers that have not answered (a collective's laggards are found by
// the daemons from every rank's progress reports), and the call keeps
// waiting. The program sees the same results and errors as without it.
class Agent {
 public:
  // Null before MPI_Init and after MPI_Finalize, and when the agent is off:
  // the wrappers then call PMPI straight through.
  static Agent* active() { return active_.load(std::memory_order_acquire); }
  // Right after a successful PMPI_Init / PMPI_Init_thread. Collective: the
  // ranks exchange their daemons through PMIx (PMIx_Fence) when they run
  // under a PMIx server, else in one PMPI_Allgather.
  static void initialized();
  // Right before PMPI_Finalize.
  static void finalizing();

  struct Call {
    const char* name = "";
    DeadlinePolicy::Kind kind = DeadlinePolicy::Kind::kPointToPoint;
    MPI_Comm comm = MPI_COMM_NULL;
    int peer = MPI_PROC_NULL;  // rank in comm; MPI_ANY_SOURCE; MPI_PROC_NULL: none
    int tag = 0;
    uint64_t bytes = 0;
    uint64_t collective_seq = 0;
    int64_t start_ns = 0;
    // Waits: the requests it waits on (for their peers).
    const MPI_Request* requests = nullptr;
    int request_count = 0;
  };

  Call pointToPoint(const char* name, MPI_Comm comm, int peer, int tag, int count, MPI_Datatype type);
  Call collective(const char* name, MPI_Comm comm, int count, MPI_Datatype type);
  // A blocking collective runs as itself, watched from the agent's thread
  // (see DeadlineWatch): around the PMPI call.
  std::optional<size_t> watch(const Call& call);
  void watched(std::optional<size_t> slot, const Call& call);
  Call waitOn(const char* name, const MPI_Request* requests, int count);

  // `test(int* flag)` is the nonblocking form's PMPI_Test*; it returns an
  // MPI error code. Loops until flag or an error.
  template <typename Test>
  int wait(Call& call, Test&& test) {
    int flag = 0;
    int rc = test(&flag);
    if (rc != MPI_SUCCESS || flag) return rc;  // done at once: the usual case for small messages
    return waitLoop(call, [](void* t, int* f) { return (*static_cast<std::remove_reference_t<Test>*>(t))(f); },
                    &test);
  }

  // The call returned `rc`: logged; an error becomes a symptom. Returns rc.
  int end(Call& call, int rc);
  // A call the agent only passes through: an error becomes a symptom.
  int checked(const char* name, int rc);

  // The program's own nonblocking requests.
  void requestStarted(MPI_Request request, const char* operation, MPI_Comm comm, int peer, bool persistent);
  // The program's own nonblocking collective (MPI_Iallreduce, ...), right
  // after the call: it counts as entered on `comm`, as a blocking one does,
  // and its request (MPI_REQUEST_NULL when the call failed) is remembered
  // as that collective, for a wait on it that times out.
  void collectiveStarted(MPI_Request request, const char* operation, MPI_Comm comm);
  // After a wait or test: requests that became MPI_REQUEST_NULL are done.
  void requestsSettled(std::span<const MPI_Request> before, std::span<const MPI_Request> after);
  void requestFreed(MPI_Request request);

  // Communicators: made from `parent` by every member of it (colour for
  // splits), or freed. An intercommunicator child (from an intercommunicator
  // parent) keeps its remote group too.
  void commCreated(MPI_Comm parent, MPI_Comm child, std::optional<int> colour = std::nullopt);
  // Made from `parent` by its own members only (MPI_Comm_create_group).
  void commCreatedByMembers(MPI_Comm parent, MPI_Comm child);
  // An intercommunicator made from two groups (MPI_Intercomm_create).
  void intercommCreated(MPI_Comm intercomm);
  void commFreed(MPI_Comm comm);

  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;
  ~Agent();

 private:
  struct Key {
    explicit Key() = default;
  };

 public:
  Agent(Key, AgentOptions options);  // through initialized()

 private:
  int waitLoop(Call& call, int (*test)(void*, int*), void* context);
  void timedOut(const Call& call, std::chrono::nanoseconds waited);
  // A communicator's local group, and an intercommunicator's remote group
  // (empty for an intracommunicator), as world ranks.
  std::vector<uint32_t> worldRanks(MPI_Comm comm) const;
  std::vector<uint32_t> remoteWorldRanks(MPI_Comm comm) const;
  std::vector<uint32_t> worldRanksOf(MPI_Group group) const;
  void describeCollective(SymptomReport& symptom, uint64_t comm, uint64_t collective_seq) const;
  ProgressSnapshot progress() const;
  void openLog();

  static std::atomic<Agent*> active_;

  AgentOptions options_;
  int world_rank_ = 0, world_size_ = 1;
  DeadlinePolicy deadlines_;
  CommRegistry comms_;
  RequestRegistry requests_;
  std::unique_ptr<wire::MessageLog> log_;
  void* log_region_ = nullptr;
  size_t log_size_ = 0;
  std::string log_path_;
  std::unique_ptr<DaemonLink> link_;
  std::unique_ptr<PmixJob> pmix_;  // while the agent is in PMIx
  // Set after link_ and reset before it: its reports go through the link.
  std::unique_ptr<EndingSignals> ending_;
  std::atomic<const char*> current_operation_{nullptr};
  // The watchdog of blocking collectives.
  void watchdog();
  void stopWatchdog();
  DeadlineWatch<Call> collectives_in_flight_;
  std::thread watchdog_;
  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_wake_;
  bool watchdog_stopping_ = false;
};

}  // namespace nk::pmpi
