#pragma once

#include <grpcpp/support/status.h>

#include "base/result.h"

namespace nk {

// Node, apps and tasks adapters.
// A stream the server ends on its own side (the domain has no error for
// it: nothing failed, the other end is gone or was unregistered).
grpc::Status streamCancelled(std::string message);

// The one place where domain errors become gRPC statuses.
grpc::Status toGrpcStatus(const Error& error);
grpc::Status toGrpcStatus(const Status& status);

}  // namespace nk

// Faults adapters.
namespace nk {

// A caller that did not prove itself a peer daemon (no or a wrong token):
// no domain error says this, so it is built here.
grpc::Status unauthenticatedStatus(const std::string& message);
// What another daemon answered, as a domain error (with its message).
Error fromGrpcStatus(const grpc::Status& status);

}  // namespace nk
