#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/result.h"
#include "nodekeeper/v1/tasks.pb.h"

namespace nk::cli {

// The CLI's side of nodekeeper.v1.TasksService, with a deadline on every
// call and one-line errors, like AppsClient.
class TasksClient {
 public:
  TasksClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~TasksClient();
  TasksClient(const TasksClient&) = delete;
  TasksClient& operator=(const TasksClient&) = delete;

  Result<nodekeeper::v1::SessionList> listSessions();

 private:
  struct Impl;

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::cli
