#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace nk::client {

class ThreadCountApplier;

struct DaemonConnectionOptions {
  std::string socket_path;
  std::string app_name;
  uint32_t max_threads = 0;
  uint64_t power_budget_mw = 0;
  bool tracing_only = false;  // see ClientOptions::tracingOnly
  // RegisterApp, and UnregisterApp as the program ends: whether a daemon
  // answers at all is learned quickly (the program never waits for it).
  std::chrono::milliseconds rpc_deadline{300};
  // A registered app's calls (its threads, its budget). A daemon slow to
  // answer for a while (a busy node, a stall) is not taken for gone: that
  // gave back the daemon's decisions and registered the program as a new
  // app each time a thread's registration took over rpc_deadline. One
  // silent this long is gone. stop() cancels a call in flight.
  std::chrono::milliseconds session_rpc_deadline{10000};
  std::chrono::milliseconds report_interval{250};
  bool debug = false;
};

// The app's link to nodekeeperd (AppsService over the Unix socket), run by
// one background thread: register, keep the Control stream, reconnect with
// backoff. The public calls never block on the daemon.
class DaemonConnection {
 public:
  DaemonConnection(DaemonConnectionOptions options, ThreadCountApplier& applier);
  DaemonConnection(const DaemonConnection&) = delete;
  DaemonConnection& operator=(const DaemonConnection&) = delete;
  ~DaemonConnection();

  void start();
  void stop(std::chrono::milliseconds grace);

  void threadBegan(int tid);
  void threadEnded(int tid);
  void setPowerBudget(uint64_t mw);
  void reportTeamSize(uint32_t size);
  [[nodiscard]] bool managed() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace nk::client
