#include "api/rpc_latency_interceptor.h"

#include <chrono>

#include "metrics/rpc_latencies.h"

namespace nk {

namespace {

using grpc::experimental::InterceptionHookPoints;

class TimedCall : public grpc::experimental::Interceptor {
 public:
  TimedCall(RpcLatencies& latencies, const char* method)
      : latencies_(latencies), method_(method ? method : ""), start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
      latencies_.observe(method_, took.count());
    }
    methods->Proceed();
  }

 private:
  RpcLatencies& latencies_;
  // The call's ServerRpcInfo holds the name, and outlives this interceptor.
  const char* method_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

grpc::experimental::Interceptor* RpcLatencyInterceptor::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
  // gRPC owns what this returns and deletes it when the call is over.
  return new TimedCall(latencies_, info->method());
}

}  // namespace nk
