#pragma once

#include <grpcpp/support/server_interceptor.h>

namespace nk {

class RpcLatencies;

// Times every unary call the daemon's gRPC server answers, from the call's
// arrival to its status, into RpcLatencies. Streams are left out: their
// length is the client's to choose (a watch runs for hours), not the
// daemon's speed.
class RpcLatencyInterceptor : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcLatencyInterceptor(RpcLatencies& latencies) : latencies_(latencies) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;

 private:
  RpcLatencies& latencies_;
};

}  // namespace nk
