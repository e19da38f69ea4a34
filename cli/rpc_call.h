#pragma once

#include <chrono>
#include <string>

#include <grpcpp/grpcpp.h>

#include "base/result.h"

namespace nk::cli {

// The wording of a failed call, shared by every client of the daemon so that
// NodeService and AppsService failures read alike: one line, the daemon's own
// text where it sent one, "cannot reach" only when the socket never connected.
Error describeRpcFailure(const grpc::Status& status, grpc::Channel& channel, const std::string& socket_path,
                         std::chrono::milliseconds timeout, const char* method);

// "5 s", "0.2 s", "0.35 s".
std::string secondsText(std::chrono::milliseconds duration);

// One unary call with the deadline every CLI call carries.
template <typename Stub, typename Request, typename Reply>
Result<Reply> unaryCall(Stub& stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
                        const Request& request, const char* name, grpc::Channel& channel,
                        const std::string& socket_path, std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  Reply reply;
  grpc::Status status = (stub.*method)(&context, request, &reply);
  if (!status.ok()) return describeRpcFailure(status, channel, socket_path, timeout, name);
  return reply;
}

}  // namespace nk::cli
