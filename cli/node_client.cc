#include "cli/node_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "cli/interrupt_watcher.h"
#include "nodekeeper/v1/node.grpc.pb.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;

// Why a plain connect() to the socket fails, in the words of errno; gRPC's
// own text for this ("failed to connect to all addresses; last error: ...")
// says less. Empty when the socket accepts connections.
std::string probeSocket(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return "socket path is too long";
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::strerror(errno);
  std::string problem;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) problem = std::strerror(errno);
  ::close(fd);
  return problem;
}

std::string codeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::CANCELLED: return "cancelled";
    case grpc::StatusCode::INVALID_ARGUMENT: return "invalid argument";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "deadline exceeded";
    case grpc::StatusCode::NOT_FOUND: return "not found";
    case grpc::StatusCode::ALREADY_EXISTS: return "already exists";
    case grpc::StatusCode::PERMISSION_DENIED: return "permission denied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "resource exhausted";
    case grpc::StatusCode::FAILED_PRECONDITION: return "failed precondition";
    case grpc::StatusCode::ABORTED: return "aborted";
    case grpc::StatusCode::OUT_OF_RANGE: return "out of range";
    case grpc::StatusCode::UNIMPLEMENTED: return "not implemented";
    case grpc::StatusCode::INTERNAL: return "internal error";
    case grpc::StatusCode::UNAVAILABLE: return "unavailable";
    case grpc::StatusCode::DATA_LOSS: return "data loss";
    case grpc::StatusCode::UNAUTHENTICATED: return "unauthenticated";
    default: return "unknown error";
  }
}

ErrorCode errorCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT: return ErrorCode::kInvalidArgument;
    case grpc::StatusCode::NOT_FOUND: return ErrorCode::kNotFound;
    case grpc::StatusCode::PERMISSION_DENIED: return ErrorCode::kPermissionDenied;
    case grpc::StatusCode::FAILED_PRECONDITION: return ErrorCode::kFailedPrecondition;
    case grpc::StatusCode::UNAVAILABLE: return ErrorCode::kUnavailable;
    case grpc::StatusCode::OUT_OF_RANGE: return ErrorCode::kOutOfRange;
    case grpc::StatusCode::UNIMPLEMENTED: return ErrorCode::kUnimplemented;
    default: return ErrorCode::kInternal;
  }
}

// "5 s", "0.2 s", "0.35 s".
std::string seconds(std::chrono::milliseconds duration) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", static_cast<double>(duration.count()) / 1000.0);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

// Keeps the first line only: the CLI prints exactly one line per error.
std::string firstLine(std::string text) {
  size_t newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

// The daemon also answers UNAVAILABLE (a sysfs file it could not use), so
// only call it "cannot reach" when the channel never got connected.
Error describe(const grpc::Status& status, grpc::Channel& channel, const std::string& socket_path,
               std::chrono::milliseconds timeout, const char* method) {
  const std::string message = firstLine(status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      if (channel.GetState(false) != GRPC_CHANNEL_READY) {
        std::string detail = probeSocket(socket_path);
        if (detail.empty()) detail = message.empty() ? "connection failed" : message;
        return {ErrorCode::kUnavailable, "cannot reach nodekeeperd at " + socket_path + ": " + detail +
                                             " (is the daemon running? set --socket or NODEKEEPER_SOCKET)"};
      }
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return {ErrorCode::kUnavailable, "nodekeeperd at " + socket_path + " did not answer " + method + " within " +
                                           seconds(timeout) + " (see --timeout)"};
    case grpc::StatusCode::UNIMPLEMENTED:
      if (message.empty())
        return {ErrorCode::kUnimplemented,
                std::string("nodekeeperd does not implement ") + method + " (is it older than this nodekeeper?)"};
      break;
    default:
      break;
  }
  return {errorCode(status.error_code()), message.empty() ? codeName(status.error_code()) : message};
}

}  // namespace

struct NodeClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::NodeService::Stub> stub;

  // Every unary call goes through here, so each one gets the deadline and
  // the same error wording.
  template <typename Request, typename Reply>
  Result<Reply> call(grpc::Status (pb::NodeService::Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
                     const Request& request, const char* name, const std::string& socket_path,
                     std::chrono::milliseconds timeout) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    Reply reply;
    grpc::Status status = (stub.get()->*method)(&context, request, &reply);
    if (!status.ok()) return describe(status, *channel, socket_path, timeout, name);
    return reply;
  }
};

NodeClient::NodeClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::NodeService::NewStub(impl_->channel);
}

NodeClient::~NodeClient() = default;

Result<pb::Topology> NodeClient::getTopology() {
  return impl_->call(&pb::NodeService::Stub::GetTopology, pb::GetTopologyRequest(), "GetTopology", socket_path_,
                     timeout_);
}

Result<pb::TelemetrySnapshot> NodeClient::getTelemetry(bool fresh) {
  pb::GetTelemetryRequest request;
  request.set_fresh(fresh);
  return impl_->call(&pb::NodeService::Stub::GetTelemetry, request, "GetTelemetry", socket_path_, timeout_);
}

Result<pb::FrequencyPolicies> NodeClient::getFrequencyPolicies() {
  return impl_->call(&pb::NodeService::Stub::GetFrequencyPolicies, pb::GetFrequencyPoliciesRequest(),
                     "GetFrequencyPolicies", socket_path_, timeout_);
}

Result<pb::FrequencyPolicies> NodeClient::setFrequencyLimits(const pb::SetFrequencyLimitsRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetFrequencyLimits, request, "SetFrequencyLimits", socket_path_,
                     timeout_);
}

Result<pb::FrequencyPolicies> NodeClient::setGovernor(const pb::SetGovernorRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetGovernor, request, "SetGovernor", socket_path_, timeout_);
}

Result<pb::PowerCaps> NodeClient::getPowerCaps() {
  return impl_->call(&pb::NodeService::Stub::GetPowerCaps, pb::GetPowerCapsRequest(), "GetPowerCaps", socket_path_,
                     timeout_);
}

Result<pb::PowerCaps> NodeClient::setPowerCap(const pb::SetPowerCapRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetPowerCap, request, "SetPowerCap", socket_path_, timeout_);
}

Result<pb::NodePolicy> NodeClient::getPolicy() {
  return impl_->call(&pb::NodeService::Stub::GetPolicy, pb::GetPolicyRequest(), "GetPolicy", socket_path_, timeout_);
}

Result<pb::NodePolicy> NodeClient::setPolicy(const pb::SetPolicyRequest& request) {
  return impl_->call(&pb::NodeService::Stub::SetPolicy, request, "SetPolicy", socket_path_, timeout_);
}

Result<pb::Identity> NodeClient::whoAmI() {
  return impl_->call(&pb::NodeService::Stub::WhoAmI, pb::WhoAmIRequest(), "WhoAmI", socket_path_, timeout_);
}

Status NodeClient::streamTelemetry(uint32_t interval_ms,
                                   const std::function<bool(const pb::TelemetrySnapshot&)>& on_snapshot,
                                   const InterruptWatcher* interrupts) {
  using Clock = std::chrono::steady_clock;
  // No overall deadline: the stream runs until stopped. Liveness is checked
  // per snapshot instead, by the monitor below.
  grpc::ClientContext context;
  pb::StreamTelemetryRequest request;
  request.set_interval_ms(interval_ms);
  auto reader = impl_->stub->StreamTelemetry(&context, request);

  const auto stall_limit = std::chrono::milliseconds(interval_ms) + timeout_;
  std::atomic<bool> done{false};
  std::atomic<bool> interrupted{false};
  std::atomic<bool> stalled{false};
  std::atomic<Clock::rep> last_activity{Clock::now().time_since_epoch().count()};

  std::thread monitor([&] {
    while (!done.load()) {
      bool signalled = interrupts != nullptr ? interrupts->wait(std::chrono::milliseconds(100))
                                             : (std::this_thread::sleep_for(std::chrono::milliseconds(100)), false);
      if (done.load()) return;
      if (signalled) {
        interrupted.store(true);
        context.TryCancel();
        return;
      }
      auto last = Clock::time_point(Clock::duration(last_activity.load()));
      if (Clock::now() - last > stall_limit) {
        stalled.store(true);
        context.TryCancel();
        return;
      }
    }
  });

  pb::TelemetrySnapshot snapshot;
  bool stopped = false;
  while (reader->Read(&snapshot)) {
    last_activity.store(Clock::now().time_since_epoch().count());
    if (!on_snapshot(snapshot)) {
      stopped = true;
      context.TryCancel();
      break;
    }
  }
  // After a cancel the reads end at once; Finish wants them drained.
  while (reader->Read(&snapshot)) {
  }
  done.store(true);
  monitor.join();
  grpc::Status status = reader->Finish();

  if (stopped || interrupted.load()) return {};
  if (stalled.load())
    return unavailable("no telemetry from nodekeeperd at " + socket_path_ + " for " + seconds(stall_limit));
  if (status.ok()) return {};
  return describe(status, *impl_->channel, socket_path_, timeout_, "StreamTelemetry");
}

}  // namespace nk::cli
