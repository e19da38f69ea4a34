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
  std::chrono::milliseconds rpc_deadline{300};
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
