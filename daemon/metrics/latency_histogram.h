#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

#include "metrics/metrics_writer.h"

namespace nk {

// Durations in seconds counted into fixed buckets, from any thread without
// a lock: an observation is a few relaxed atomic adds.
class LatencyHistogram {
 public:
  // Upper bounds in seconds, from half a millisecond (a unary RPC answered
  // from memory) to ten seconds (one stuck behind a busy node).
  static constexpr std::array<double, 14> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                     0.1,    0.25,  0.5,    1,     2.5,   5,     10};

  void observe(double seconds);

  // The histogram's _bucket (cumulative, le="+Inf" last), _sum and _count
  // samples, with `labels` before le.
  void write(MetricsWriter& out, std::string_view family, std::span<const MetricsWriter::Label> labels) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> counts_{};  // not cumulative; the last is past every bound
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace nk
