#include "metrics/rpc_latencies.h"

#include <mutex>

namespace nk {

namespace {

constexpr std::string_view kOther = "other";

}  // namespace

LatencyHistogram& RpcLatencies::histogramFor(std::string_view full_method) {
  {
    std::shared_lock lock(mutex_);
    if (auto it = by_method_.find(full_method); it != by_method_.end()) return *it->second;
  }
  std::unique_lock lock(mutex_);
  if (auto it = by_method_.find(full_method); it != by_method_.end()) return *it->second;
  std::string_view key = by_method_.size() < kMaxMethods ? full_method : kOther;
  auto [it, added] = by_method_.try_emplace(std::string(key));
  if (added) it->second = std::make_unique<LatencyHistogram>();
  return *it->second;
}

void RpcLatencies::observe(std::string_view full_method, double seconds) {
  histogramFor(full_method).observe(seconds);
}

void RpcLatencies::write(MetricsWriter& out) const {
  out.family(kFamily, MetricsWriter::Type::kHistogram,
             "Time the daemon took to answer a unary gRPC call, from its arrival to its status, by service and "
             "method.");
  std::shared_lock lock(mutex_);
  for (const auto& [method, histogram] : by_method_) {
    // "/pkg.Service/Method" -> grpc_service="pkg.Service", grpc_method="Method".
    std::string_view name = method;
    if (name.starts_with('/')) name.remove_prefix(1);
    const size_t slash = name.rfind('/');
    std::string_view service = slash == std::string_view::npos ? std::string_view() : name.substr(0, slash);
    std::string_view rpc = slash == std::string_view::npos ? name : name.substr(slash + 1);
    const MetricsWriter::Label labels[] = {{"grpc_service", service}, {"grpc_method", rpc}};
    histogram->write(out, kFamily, labels);
  }
}

}  // namespace nk
