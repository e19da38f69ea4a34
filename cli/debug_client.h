#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"

namespace nk::cli {

// A frontend's Debug stream (TasksService.Debug): commands go out with an
// id, each call waits for the acknowledgement with that id. Everything
// else the daemon sends (task events, news from the gate) goes to the
// callbacks, on the stream's reader thread.
class DebugClient {
 public:
  struct Callbacks {
    std::function<void(const nodekeeper::v1::TaskEventBatch&)> events;
    std::function<void(const nodekeeper::v1::DebugUpdate&)> news;  // command_id 0
  };

  DebugClient(std::string socket_path, Callbacks callbacks);
  ~DebugClient();
  DebugClient(const DebugClient&) = delete;
  DebugClient& operator=(const DebugClient&) = delete;

  // Opens the stream and attaches; the reply is the attach's update (a
  // status of the session).
  Result<nodekeeper::v1::DebugUpdate> attach(uint64_t session, bool events, uint32_t grace_s,
                                             std::chrono::milliseconds timeout);
  // One command; its acknowledgement (ok or not), or an error when the
  // stream broke or no answer came within `timeout`.
  Result<nodekeeper::v1::DebugUpdate> call(nodekeeper::v1::DebugCommand command, std::chrono::milliseconds timeout);
  // The last status the daemon sent (with any answer or news).
  std::optional<nodekeeper::v1::DebugStatus> lastStatus() const;
  // Why the stream ended (the daemon went, or refused), or nothing while
  // it is open.
  std::optional<Error> endedBecause() const;
  void close();

 private:
  struct Impl;
  void readLoop();

  std::string socket_path_;
  Callbacks callbacks_;
  std::unique_ptr<Impl> impl_;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::condition_variable answered_;
  std::map<uint64_t, nodekeeper::v1::DebugUpdate> answers_;
  std::optional<nodekeeper::v1::DebugStatus> last_status_;
  bool ended_ = false;
  bool closed_ = false;
  Error end_error_;
  uint64_t next_id_ = 1;
};

}  // namespace nk::cli
