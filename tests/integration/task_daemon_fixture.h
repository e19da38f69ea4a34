#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "taskgraph/task_graph.h"
#include "testlib/daemon_fixture.h"

namespace nk::test {

// A real nodekeeperd for task-event tests, a TasksService stub to it, and
// the graph its one recording holds, rebuilt from the file as a frontend
// without the daemon would.
class TaskDaemonFixture : public DaemonFixture {
 protected:
  explicit TaskDaemonFixture(std::string tag, std::vector<std::string> daemon_args = {})
      : DaemonFixture(std::move(tag), std::move(daemon_args)) {}
  void SetUp() override;

  std::vector<nodekeeper::v1::Session> sessions();
  std::vector<std::filesystem::path> recordings();
  // Expects exactly one recording, every frame whole and valid.
  TaskGraph graphFromRecording(uint64_t* frames = nullptr);

  std::unique_ptr<nodekeeper::v1::TasksService::Stub> tasks_;
};

}  // namespace nk::test
