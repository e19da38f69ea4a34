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
    case ErrorCode::kResourceExhausted: code = grpc::StatusCode::RESOURCE_EXHAUSTED; break;
  }
  return grpc::Status(code, error.message);
}

grpc::Status toGrpcStatus(const Status& status) {
  return status.ok() ? grpc::Status::OK : toGrpcStatus(status.error());
}

}  // namespace nk

// Faults adapters.
namespace nk {

grpc::Status unauthenticatedStatus(const std::string& message) {
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, message);
}

Error fromGrpcStatus(const grpc::Status& status) {
  ErrorCode code = ErrorCode::kInternal;
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT: code = ErrorCode::kInvalidArgument; break;
    case grpc::StatusCode::NOT_FOUND: code = ErrorCode::kNotFound; break;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED: code = ErrorCode::kPermissionDenied; break;
    case grpc::StatusCode::FAILED_PRECONDITION: code = ErrorCode::kFailedPrecondition; break;
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED: code = ErrorCode::kUnavailable; break;
    case grpc::StatusCode::OUT_OF_RANGE: code = ErrorCode::kOutOfRange; break;
    case grpc::StatusCode::UNIMPLEMENTED: code = ErrorCode::kUnimplemented; break;
    case grpc::StatusCode::DATA_LOSS: code = ErrorCode::kDataLoss; break;
    case grpc::StatusCode::RESOURCE_EXHAUSTED: code = ErrorCode::kResourceExhausted; break;
    default: break;
  }
  return {code, status.error_message()};
}

}  // namespace nk
