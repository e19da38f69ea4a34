#pragma once

#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "testlib/daemon_process.h"
#include "testlib/temp_dir.h"

namespace nk::test {

// A test with one real nodekeeperd on an emulated node: its state
// directory a fresh shared TempDir, started in SetUp (a failure to start
// fails the test, with the reason and the daemon's stderr), a channel to
// its socket, stopped in TearDown. Subclasses that override SetUp call
// this one first and return if HasFatalFailure().
class DaemonFixture : public ::testing::Test {
 protected:
  explicit DaemonFixture(std::string tag, std::vector<std::string> daemon_args = {})
      : dir_(tag, TempDir::Access::kShared), daemon_args_(std::move(daemon_args)) {}

  void SetUp() override;
  void TearDown() override;

  // Declared first: the daemon stops before its directory goes.
  TempDir dir_;
  DaemonProcess daemon_;
  std::shared_ptr<grpc::Channel> channel_;

 private:
  std::vector<std::string> daemon_args_;
};

}  // namespace nk::test
