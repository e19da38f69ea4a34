#include "api/status_mapping.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace nk {
namespace {

TEST(StatusMappingTest, EachDomainErrorBecomesItsGrpcCodeWithItsMessage) {
  const std::vector<std::pair<Error, grpc::StatusCode>> cases = {
      {invalidArgument("a"), grpc::StatusCode::INVALID_ARGUMENT},
      {notFound("b"), grpc::StatusCode::NOT_FOUND},
      {permissionDenied("c"), grpc::StatusCode::PERMISSION_DENIED},
      {failedPrecondition("d"), grpc::StatusCode::FAILED_PRECONDITION},
      {unavailable("e"), grpc::StatusCode::UNAVAILABLE},
      {Error{ErrorCode::kOutOfRange, "f"}, grpc::StatusCode::OUT_OF_RANGE},
      {internalError("g"), grpc::StatusCode::INTERNAL},
      {Error{ErrorCode::kUnimplemented, "h"}, grpc::StatusCode::UNIMPLEMENTED},
      {dataLoss("i"), grpc::StatusCode::DATA_LOSS},
  };
  for (const auto& [error, code] : cases) {
    grpc::Status status = toGrpcStatus(error);
    EXPECT_EQ(status.error_code(), code) << error.message;
    EXPECT_EQ(status.error_message(), error.message);
  }
}

TEST(StatusMappingTest, AnOkStatusIsOkAndAFailedOneKeepsItsError) {
  EXPECT_TRUE(toGrpcStatus(Status()).ok());
  grpc::Status failed = toGrpcStatus(Status(notFound("no such app")));
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(failed.error_message(), "no such app");
}

TEST(StatusMappingTest, AStreamTheServerEndsIsCancelledWithItsReason) {
  grpc::Status status = streamCancelled("control stream of app 3 ended");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(status.error_message(), "control stream of app 3 ended");
}

}  // namespace
}  // namespace nk
