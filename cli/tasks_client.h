#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_graph.h"

namespace nk::cli {

// A task graph read from a recording (through the daemon or from its
// file), and where the recording stopped being readable, if it did.
struct RecordedGraph {
  std::string label;   // "session 3" or the file's path
  TaskGraph graph;
  std::string damage;  // empty: the whole recording was read
};

// The CLI's side of nodekeeper.v1.TasksService, with a deadline on every
// call and one-line errors, like AppsClient.
class TasksClient {
 public:
  TasksClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~TasksClient();
  TasksClient(const TasksClient&) = delete;
  TasksClient& operator=(const TasksClient&) = delete;

  Result<nodekeeper::v1::SessionList> listSessions();
  // The session's recorded batches, in order, to `on_batch` (which returns
  // false to stop early). A replay may take longer than one call's
  // timeout: its deadline is twelve times that, at least a minute.
  Status watch(uint64_t session, const std::function<bool(const nodekeeper::v1::TaskEventBatch&)>& on_batch);
  // SESSION as users give it: a session id, else a pid (its newest
  // session). `command` starts the error messages.
  Result<uint64_t> resolveSession(std::string_view selector, std::string_view command);
  // The session's graph as recorded so far; a damaged recording gives the
  // graph up to its last good frame, and says where it stopped.
  Result<RecordedGraph> graph(uint64_t session);

 private:
  struct Impl;

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::cli
