#include "metrics/rpc_latencies.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(RpcLatenciesTest, OneHistogramPerMethodLabelledByServiceAndMethod) {
  RpcLatencies rpc;
  rpc.observe("/nodekeeper.v1.Node/GetTelemetry", 0.001);
  rpc.observe("/nodekeeper.v1.Node/GetTelemetry", 0.002);
  rpc.observe("/nodekeeper.v1.Apps/ListApps", 0.003);
  MetricsWriter out;
  rpc.write(out);
  const std::string text = out.take();
  EXPECT_EQ(occurrences(text, "# TYPE nodekeeper_grpc_server_handling_seconds histogram\n"), 1u);
  EXPECT_NE(text.find("nodekeeper_grpc_server_handling_seconds_count{grpc_service=\"nodekeeper.v1.Node\","
                      "grpc_method=\"GetTelemetry\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("nodekeeper_grpc_server_handling_seconds_count{grpc_service=\"nodekeeper.v1.Apps\","
                      "grpc_method=\"ListApps\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(RpcLatenciesTest, MethodsPastTheBoundCountAsOther) {
  RpcLatencies rpc;
  for (size_t i = 0; i < RpcLatencies::kMaxMethods + 50; ++i) rpc.observe("/x.S/M" + std::to_string(i), 0.001);
  MetricsWriter out;
  rpc.write(out);
  const std::string text = out.take();
  EXPECT_EQ(occurrences(text, "_count{"), RpcLatencies::kMaxMethods + 1);
  EXPECT_NE(text.find("grpc_method=\"other\"} 50\n"), std::string::npos);
}

}  // namespace
}  // namespace nk
