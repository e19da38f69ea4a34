#include "metrics/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace nk {

void LatencyHistogram::observe(double seconds) {
  if (!(seconds >= 0)) seconds = 0;  // NaN too: a clock that went back counts as instant
  const size_t bucket = static_cast<size_t>(std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(std::llround(std::min(seconds, 1e9) * 1e9)), std::memory_order_relaxed);
}

void LatencyHistogram::write(MetricsWriter& out, std::string_view family,
                             std::span<const MetricsWriter::Label> labels) const {
  std::vector<MetricsWriter::Label> with_le(labels.begin(), labels.end());
  with_le.push_back({"le", ""});
  const std::string bucket_name = std::string(family) + "_bucket";
  // Read once: every bucket, _count and _sum from the same counts, so
  // a scrape never sees a bucket above the count.
  std::array<uint64_t, kBounds.size() + 1> counts;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = counts_[i].load(std::memory_order_relaxed);
  const double sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  uint64_t cumulative = 0;
  std::string bound;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    bound.clear();
    if (i < kBounds.size()) MetricsWriter::appendValue(bound, kBounds[i]);
    else bound = "+Inf";
    with_le.back().value = bound;
    out.sample(bucket_name, with_le, static_cast<double>(cumulative));
  }
  out.sample(std::string(family) + "_sum", labels, sum);
  out.sample(std::string(family) + "_count", labels, static_cast<double>(cumulative));
}

}  // namespace nk
