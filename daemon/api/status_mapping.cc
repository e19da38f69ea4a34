#include "status_mapping.h"

namespace nk {

// Node, apps and tasks adapters.
grpc::Status streamCancelled(std::string message) {
  return grpc::Status(grpc::StatusCode::CANCELLED, std::move(message));
}

grpc::Status toGrpcStatus(const Error& error) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (error.code) {
    case ErrorCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case ErrorCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case ErrorCode::kPermissionDenied: code = grpc::StatusCode::PERMISSION_DENIED; break;
    case ErrorCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    case ErrorCode::kUnavailable: code = grpc::StatusCode::UNAVAILABLE; break;
    case ErrorCode::kOutOfRange: code = grpc::StatusCode::OUT_OF_RANGE; break;
    case ErrorCode::kInternal: code = grpc::StatusCode::INTERNAL; break;
    case ErrorCode::kUnimplemented: code = grpc::StatusCode::UNIMPLEMENTED; break;
    case ErrorCode::kDataLoss: code = grpc::StatusCode::DATA_LOSS; break;
  }
  return grpc::Status(code, error.message);
}

grpc::Status toGrpcStatus(const Status& status) {
  return status.ok() ? grpc::Status::OK : toGrpcStatus(status.error());
}

}  // namespace nk
