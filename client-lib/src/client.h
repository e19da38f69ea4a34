#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "client_options.h"
#include "thread_count_applier.h"

namespace nk::client {

class DaemonConnection;

// The library's one instance: options, the D applier, the daemon link and
// the OMPT observations. Never destroyed (a detached background thread may
// outlive exit handlers).
class Client {
 public:
  static Client& instance();

  int init();
  int finalize();
  int setPowerBudgetMw(uint64_t mw);
  int threadCount(uint32_t* d);
  int applyThreadCount();
  // A debugger's thread count, applied like D after the current region.
  void requestThreadCount(uint32_t d) { applier_.setDecision(d); }

  // The first call of the task C API or AYU_event: task events start
  // unless NODEKEEPER_TASKS=off (see ClientOptions).
  void startTasksForRuntime();

  // From the OMPT tool; the parallel ones are the hot path. ompInitialized
  // says whether to register the OpenMP task callbacks.
  bool ompInitialized();
  void threadBegin(bool initial);
  void threadEnd();
  void parallelBegin(uint32_t requested);
  void parallelEnd();
  void ompFinalized();

 private:
  Client() = default;
  void debugSummary();

  std::mutex mutex_;
  bool started_ = false;
  bool finalized_ = false;
  ClientOptions options_;
  ThreadCountApplier applier_;
  std::unique_ptr<DaemonConnection> connection_;
  std::atomic<DaemonConnection*> live_connection_{nullptr};
  std::atomic<size_t> forced_next_{0};
  std::atomic<uint64_t> threads_begun_{0};
  std::atomic<uint64_t> threads_ended_{0};
  std::atomic<uint64_t> regions_{0};
};

}  // namespace nk::client
