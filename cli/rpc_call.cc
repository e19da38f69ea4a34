#include "cli/rpc_call.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nk::cli {

namespace {

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
    case grpc::StatusCode::DATA_LOSS: return ErrorCode::kDataLoss;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return ErrorCode::kResourceExhausted;
    default: return ErrorCode::kInternal;
  }
}

// Keeps the first line only: the CLI prints exactly one line per error.
std::string firstLine(std::string text) {
  size_t newline = text.find('\n');
  if (newline != std::string::npos) text.resize(newline);
  return text;
}

}  // namespace

std::string secondsText(std::chrono::milliseconds duration) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", static_cast<double>(duration.count()) / 1000.0);
  std::string text = buffer;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

// The daemon also answers UNAVAILABLE (a sysfs file it could not use), so
// only call it "cannot reach" when the channel never got connected.
Error describeRpcFailure(const grpc::Status& status, grpc::Channel& channel, const std::string& socket_path,
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
                                           secondsText(timeout) + " (see --timeout)"};
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

}  // namespace nk::cli
