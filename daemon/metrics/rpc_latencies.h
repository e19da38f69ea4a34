#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "metrics/latency_histogram.h"
#include "metrics/metrics_writer.h"

namespace nk {

// Handling time of the daemon's unary RPCs, one histogram per method. The
// methods are the ones its services serve; a client naming others (gRPC
// answers those UNIMPLEMENTED) fills at most kMaxMethods of them, the rest
// count as method "other", so no client can grow the page without end.
class RpcLatencies {
 public:
  static constexpr size_t kMaxMethods = 128;
  static constexpr std::string_view kFamily = "nodekeeper_grpc_server_handling_seconds";

  // `full_method` as gRPC names it: "/nodekeeper.v1.Node/GetTelemetry".
  void observe(std::string_view full_method, double seconds);
  void write(MetricsWriter& out) const;

 private:
  LatencyHistogram& histogramFor(std::string_view full_method);

  mutable std::shared_mutex mutex_;  // the map; the histograms count without it
  std::map<std::string, std::unique_ptr<LatencyHistogram>, std::less<>> by_method_;
};

}  // namespace nk
