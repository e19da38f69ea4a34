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

Result<pb::JobList> FaultsClient::listJobs(const std::string& job_id) {
  pb::ListJobsRequest request;
  request.set_job_id(job_id);
  return unaryCall(*impl_->stub, &pb::FaultsService::Stub::ListJobs, request, "ListJobs",
                   *impl_->channel, socket_path_, timeout_);
}

namespace {

// One server-streaming watch (WatchSymptoms, WatchFaults): `start` opens the
// stream on the context it is given; every message goes to `on_message`
// until it returns false, the stream ends, or Ctrl-C.
template <typename Message, typename Start>
Status watchStream(Start start, bool follow, const std::function<bool(const Message&)>& on_message,
                   const InterruptWatcher* interrupts, grpc::Channel& channel, const std::string& socket_path,
                   std::chrono::milliseconds timeout, const char* method) {
  const auto replay_deadline = std::max(std::chrono::milliseconds(60000), timeout * 12);
  grpc::ClientContext context;
  if (!follow) context.set_deadline(std::chrono::system_clock::now() + replay_deadline);
  auto reader = start(&context);

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
  Message message;
  bool stopped = false;
  while (reader->Read(&message)) {
    if (!on_message(message)) {
      stopped = true;
      context.TryCancel();
      break;
    }
  }
  while (reader->Read(&message)) {
  }
  done.store(true);
  if (monitor.joinable()) monitor.join();
  grpc::Status status = reader->Finish();
  if (stopped || interrupted.load() || status.ok()) return {};
  return describeRpcFailure(status, channel, socket_path, follow ? timeout : replay_deadline, method);
}

}  // namespace

Status FaultsClient::watchSymptoms(const std::string& job_id, bool follow,
                                   const std::function<bool(const pb::Symptom&)>& on_symptom,
                                   const InterruptWatcher* interrupts) {
  pb::WatchSymptomsRequest request;
  request.set_job_id(job_id);
  request.set_follow(follow);
  return watchStream<pb::Symptom>(
      [&](grpc::ClientContext* context) { return impl_->stub->WatchSymptoms(context, request); }, follow,
      on_symptom, interrupts, *impl_->channel, socket_path_, timeout_, "WatchSymptoms");
}

Status FaultsClient::watchFaults(const std::string& job_id, bool follow,
                                 const std::function<bool(const pb::FaultReport&)>& on_fault,
                                 const InterruptWatcher* interrupts) {
  pb::WatchFaultsRequest request;
  request.set_job_id(job_id);
  request.set_follow(follow);
  return watchStream<pb::FaultReport>(
      [&](grpc::ClientContext* context) { return impl_->stub->WatchFaults(context, request); }, follow, on_fault,
      interrupts, *impl_->channel, socket_path_, timeout_, "WatchFaults");
}

}  // namespace nk::cli
