#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "nodekeeper/v1/faults.pb.h"

namespace nk::cli {

class InterruptWatcher;

// The CLI's side of nodekeeper.v1.FaultsService ("jobs", "symptoms",
// "faults"), with a deadline on every call and one-line errors, like
// TasksClient.
class FaultsClient {
 public:
  FaultsClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~FaultsClient();
  FaultsClient(const FaultsClient&) = delete;
  FaultsClient& operator=(const FaultsClient&) = delete;

  // `job_id`: only that job; "" for all.
  Result<nodekeeper::v1::JobList> listJobs(const std::string& job_id = "");
  // The symptoms so far (of `job_id`, or of every job when it is empty) to
  // `on_symptom`, which returns false to stop. Without `follow` the call
  // has a deadline of twelve times the timeout, at least a minute; with it,
  // none: new symptoms follow until `on_symptom` says stop or `interrupts`
  // sees Ctrl-C, which both end it without an error.
  Status watchSymptoms(const std::string& job_id, bool follow,
                       const std::function<bool(const nodekeeper::v1::Symptom&)>& on_symptom,
                       const InterruptWatcher* interrupts = nullptr);
  // The same for the faults this daemon published as root of its jobs'
  // fault localisation trees.
  Status watchFaults(const std::string& job_id, bool follow,
                     const std::function<bool(const nodekeeper::v1::FaultReport&)>& on_fault,
                     const InterruptWatcher* interrupts = nullptr);

 private:
  struct Impl;

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::cli
