#include "cli/debug_client.h"

#include <grpcpp/grpcpp.h>

#include "cli/rpc_call.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace v1 = nodekeeper::v1;

namespace nk::cli {

struct DebugClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::TasksService::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::DebugCommand, v1::DebugUpdate>> stream;
  std::mutex write_mutex;
};

DebugClient::DebugClient(std::string socket_path, Callbacks callbacks)
    : socket_path_(std::move(socket_path)), callbacks_(std::move(callbacks)), impl_(std::make_unique<Impl>()) {}

DebugClient::~DebugClient() { close(); }

void DebugClient::close() {
  if (impl_->stream && !closed_) {
    closed_ = true;
    {
      std::lock_guard lock(impl_->write_mutex);
      impl_->stream->WritesDone();
    }
    impl_->context.TryCancel();
  }
  if (reader_.joinable()) reader_.join();
}

Result<v1::DebugUpdate> DebugClient::attach(uint64_t session, bool events, uint32_t grace_s,
                                            std::chrono::milliseconds timeout) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  if (!impl_->channel->WaitForConnected(std::chrono::system_clock::now() + timeout))
    return unavailable("cannot reach nodekeeperd at " + socket_path_ + " (is it running?)");
  impl_->stub = v1::TasksService::NewStub(impl_->channel);
  impl_->stream = impl_->stub->Debug(&impl_->context);
  reader_ = std::thread([this] { readLoop(); });
  v1::DebugCommand command;
  command.mutable_attach()->set_session_id(session);
  command.mutable_attach()->set_events(events);
  command.mutable_attach()->set_grace_s(grace_s);
  return call(std::move(command), timeout);
}

Result<v1::DebugUpdate> DebugClient::call(v1::DebugCommand command, std::chrono::milliseconds timeout) {
  uint64_t id;
  {
    std::lock_guard lock(mutex_);
    if (ended_) return end_error_;
    id = next_id_++;
  }
  command.set_command_id(id);
  {
    std::lock_guard lock(impl_->write_mutex);
    if (!impl_->stream->Write(command)) {
      std::unique_lock lock2(mutex_);
      // The reader learns why the stream ended; give it a moment to say.
      answered_.wait_for(lock2, std::chrono::seconds(1), [&] { return ended_; });
      return ended_ ? end_error_ : unavailable("the debug stream to nodekeeperd broke");
    }
  }
  std::unique_lock lock(mutex_);
  if (!answered_.wait_for(lock, timeout, [&] { return answers_.count(id) || ended_; }))
    return unavailable("no answer from nodekeeperd within " + secondsText(timeout));
  auto found = answers_.find(id);
  if (found == answers_.end()) return end_error_;
  v1::DebugUpdate update = std::move(found->second);
  answers_.erase(found);
  return update;
}

std::optional<v1::DebugStatus> DebugClient::lastStatus() const {
  std::lock_guard lock(mutex_);
  return last_status_;
}

std::optional<Error> DebugClient::endedBecause() const {
  std::lock_guard lock(mutex_);
  if (!ended_) return std::nullopt;
  return end_error_;
}

void DebugClient::readLoop() {
  v1::DebugUpdate update;
  while (impl_->stream->Read(&update)) {
    if (update.has_events() && callbacks_.events) callbacks_.events(update.events());
    if (!update.has_ack() && !update.has_status()) continue;
    if (update.command_id() == 0 && callbacks_.news) callbacks_.news(update);
    std::lock_guard lock(mutex_);
    if (update.has_status()) last_status_ = update.status();
    if (update.command_id() != 0) {
      answers_[update.command_id()] = update;
      answered_.notify_all();
    }
  }
  grpc::Status status = impl_->stream->Finish();
  std::lock_guard lock(mutex_);
  ended_ = true;
  // The daemon's code stays with its words: a frontend tells a refusal
  // (another user's session) from a broken stream.
  end_error_ = status.ok() ? unavailable("the debug stream ended")
                           : describeRpcFailure(status, *impl_->channel, socket_path_, std::chrono::seconds(5), "Debug");
  answered_.notify_all();
}

}  // namespace nk::cli
