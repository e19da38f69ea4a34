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
