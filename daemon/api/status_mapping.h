#pragma once

#include <grpcpp/support/status.h>

#include "base/result.h"

namespace nk {

// The one place where domain errors become gRPC statuses.
grpc::Status toGrpcStatus(const Error& error);
grpc::Status toGrpcStatus(const Status& status);

}  // namespace nk
