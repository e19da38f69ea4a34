#include "metrics/latency_histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace nk {
namespace {

std::string render(const LatencyHistogram& h) {
  MetricsWriter out;
  const MetricsWriter::Label labels[] = {{"grpc_method", "M"}};
  h.write(out, "h_seconds", labels);
  return out.take();
}

TEST(LatencyHistogramTest, BucketsAreCumulativeWithInfLast) {
  LatencyHistogram h;
  h.observe(0.0002);  // first bucket
  h.observe(0.001);   // on a bound: in that bucket (le is "less or equal")
  h.observe(0.3);
  h.observe(100);     // past every bound
  const std::string text = render(h);
  EXPECT_NE(text.find("h_seconds_bucket{grpc_method=\"M\",le=\"0.0005\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{grpc_method=\"M\",le=\"0.001\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{grpc_method=\"M\",le=\"0.25\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{grpc_method=\"M\",le=\"0.5\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{grpc_method=\"M\",le=\"10\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{grpc_method=\"M\",le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_count{grpc_method=\"M\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_sum{grpc_method=\"M\"} 100.3012\n"), std::string::npos) << text;
  EXPECT_LT(text.find("le=\"10\""), text.find("le=\"+Inf\""));
}

TEST(LatencyHistogramTest, NegativeAndNanCountAsInstant) {
  LatencyHistogram h;
  h.observe(-1);
  h.observe(std::nan(""));
  const std::string text = render(h);
  EXPECT_NE(text.find("le=\"0.0005\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_sum{grpc_method=\"M\"} 0\n"), std::string::npos) << text;
}

TEST(LatencyHistogramTest, CountsFromManyThreadsAddUp) {
  LatencyHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) h.observe(0.002);
    });
  for (auto& t : threads) t.join();
  EXPECT_NE(render(h).find("h_seconds_count{grpc_method=\"M\"} 40000\n"), std::string::npos);
}

}  // namespace
}  // namespace nk
