#include "cli/faults_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "cli/interrupt_watcher.h"
#include "cli/rpc_call.h"
#include "nodekeeper/v1/faults.grpc.pb.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;

struct FaultsClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::FaultsService::Stub> stub;
};

FaultsClient::FaultsClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::FaultsService::NewStub(impl_->channel);
}

FaultsClient::~FaultsClient() = default;

Result<pb::JobList> FaultsClient::listJobs() {
  return unaryCall(*impl_->stub, &pb::FaultsService::Stub::ListJobs, pb::ListJobsRequest(), "ListJobs",
                   *impl_->channel, socket_path_, timeout_);
}

Status FaultsClient::watchSymptoms(const std::string& job_id, bool follow,
                                   const std::function<bool(const pb::Symptom&)>& on_symptom,
                                   const InterruptWatcher* interrupts) {
  const auto replay_deadline = std::max(std::chrono::milliseconds(60000), timeout_ * 12);
  grpc::ClientContext context;
  if (!follow) context.set_deadline(std::chrono::system_clock::now() + replay_deadline);
  pb::WatchSymptomsRequest request;
  request.set_job_id(job_id);
  request.set_follow(follow);
  auto reader = impl_->stub->WatchSymptoms(&context, request);

  // Ctrl-C cannot cancel the call from the signal handler; this thread
  // waits for it and cancels from here.
  std::atomic<bool> done{false};
  std::atomic<bool> interrupted{false};
  std::thread monitor;
  if (interrupts != nullptr) {
    monitor = std::thread([&] {
      while (!done.load()) {
        if (interrupts->wait(std::chrono::milliseconds(100))) {
          interrupted.store(true);
          context.TryCancel();
          return;
        }
      }
    });
  }
  pb::Symptom symptom;
  bool stopped = false;
  while (reader->Read(&symptom)) {
    if (!on_symptom(symptom)) {
      stopped = true;
      context.TryCancel();
      break;
    }
  }
  while (reader->Read(&symptom)) {
  }
  done.store(true);
  if (monitor.joinable()) monitor.join();
  grpc::Status status = reader->Finish();
  if (stopped || interrupted.load() || status.ok()) return {};
  return describeRpcFailure(status, *impl_->channel, socket_path_, follow ? timeout_ : replay_deadline,
                            "WatchSymptoms");
}

}  // namespace nk::cli
