#include "cli/ui/job_faults_feed.h"

#include <atomic>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "cli/rpc_call.h"
#include "cli/ui/proto_json.h"
#include "nodekeeper/v1/faults.grpc.pb.h"

namespace pb = nodekeeper::v1;

namespace nk::ui {

struct JobFaultsFeed::Calls {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::FaultsService::Stub> stub;
  grpc::ClientContext symptoms, faults;
  std::mutex mutex;
  int running = 2;  // the stream ends when both calls have
  std::atomic<bool> closing{false};
};

namespace {

// One follow watch into `queue` as `event` frames, until it ends or is
// cancelled; a failure (not ours) is an `error` frame. `context` is
// cancelled here if close() came before the call began (a cancel before it
// began would be lost).
template <typename Message, typename Start>
void follow(Start start, grpc::ClientContext& context, const char* event, const char* method, grpc::Channel& channel,
            const std::string& socket_path, std::mutex& mutex, std::atomic<bool>& closing, EventQueue& queue) {
  auto reader = start();
  {
    std::lock_guard lock(mutex);
    if (closing.load()) context.TryCancel();
  }
  Message message;
  while (reader->Read(&message)) queue.push(event, ProtoJson::toJson(message));
  grpc::Status status = reader->Finish();
  if (!status.ok() && !closing.load())
    queue.push("error", {{"message", cli::describeRpcFailure(status, channel, socket_path, std::chrono::seconds(5), method)
                                         .message}});
}

}  // namespace

JobFaultsFeed::JobFaultsFeed(std::string socket_path, std::string job_id)
    : socket_path_(std::move(socket_path)), job_id_(std::move(job_id)), calls_(std::make_unique<Calls>()) {}

JobFaultsFeed::~JobFaultsFeed() { close(); }

uint64_t JobFaultsFeed::start() {
  uint64_t reader = queue_.subscribe();
  calls_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  calls_->stub = pb::FaultsService::NewStub(calls_->channel);
  // Either call ending (an error: not the user's job, the daemon gone)
  // ends the tab's stream: the other is cancelled.
  auto finished = [this] {
    std::lock_guard lock(calls_->mutex);
    calls_->closing.store(true);
    calls_->symptoms.TryCancel();
    calls_->faults.TryCancel();
    if (--calls_->running == 0) queue_.close();
  };
  symptoms_ = std::thread([this, finished] {
    pb::WatchSymptomsRequest request;
    request.set_job_id(job_id_);
    request.set_follow(true);
    follow<pb::Symptom>([&] { return calls_->stub->WatchSymptoms(&calls_->symptoms, request); }, calls_->symptoms,
                        "symptom", "WatchSymptoms", *calls_->channel, socket_path_, calls_->mutex, calls_->closing,
                        queue_);
    finished();
  });
  faults_ = std::thread([this, finished] {
    pb::WatchFaultsRequest request;
    request.set_job_id(job_id_);
    request.set_follow(true);
    follow<pb::FaultReport>([&] { return calls_->stub->WatchFaults(&calls_->faults, request); }, calls_->faults,
                            "fault", "WatchFaults", *calls_->channel, socket_path_, calls_->mutex, calls_->closing,
                            queue_);
    finished();
  });
  return reader;
}

void JobFaultsFeed::close() {
  {
    std::lock_guard lock(calls_->mutex);
    calls_->closing.store(true);
    calls_->symptoms.TryCancel();
    calls_->faults.TryCancel();
  }
  if (symptoms_.joinable()) symptoms_.join();
  if (faults_.joinable()) faults_.join();
  queue_.close();
}

}  // namespace nk::ui
