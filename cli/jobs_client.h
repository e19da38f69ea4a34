#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/result.h"
#include "nodekeeper/v1/jobs.pb.h"

namespace nk::cli {

// The CLI's side of nodekeeper.v1.JobsService ("job begin/attach/end", what
// the Slurm plugin runs as root), with a deadline on every call and
// one-line errors, like FaultsClient.
class JobsClient {
 public:
  JobsClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~JobsClient();
  JobsClient(const JobsClient&) = delete;
  JobsClient& operator=(const JobsClient&) = delete;

  Result<nodekeeper::v1::Job> beginJob(const nodekeeper::v1::BeginJobRequest& request);
  Status attachProcess(const nodekeeper::v1::AttachProcessRequest& request);
  Result<nodekeeper::v1::Job> endJob(const nodekeeper::v1::EndJobRequest& request);

 private:
  struct Impl;

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::cli
