#include "energy/frequency_table.h"

#include <algorithm>
#include <cmath>

namespace nk {

namespace {
constexpr double kDefaultStepKhz = 100000.0;  // 100 MHz, the step of Shafik et al.'s Xeon E5-2630
}

// Clamps to the policy limits first and searches only entries inside them,
// like __resolve_freq(); with no table the clamped value is the answer.
uint64_t FrequencyTable::resolve(double target_khz, const CoreLimits& limits,
                                 FrequencyRelation relation) const {
  if (limits.max_khz == 0)
    return 0;
  if (!std::isfinite(target_khz))
    target_khz = static_cast<double>(limits.max_khz);
  double clamped = std::clamp(target_khz, static_cast<double>(limits.min_khz),
                              static_cast<double>(limits.max_khz));
  if (table_.empty())
    return static_cast<uint64_t>(std::llround(clamped));

  int64_t below = -1;  // highest entry <= target
  int64_t above = -1;  // lowest entry >= target
  for (size_t i = 0; i < table_.size(); ++i) {
    uint64_t f = table_[i];
    if (f < limits.min_khz || f > limits.max_khz)
      continue;
    double fd = static_cast<double>(f);
    if (fd <= clamped && (below < 0 || f > table_[below]))
      below = static_cast<int64_t>(i);
    if (fd >= clamped && (above < 0 || f < table_[above]))
      above = static_cast<int64_t>(i);
  }
  if (below < 0 && above < 0)
    return static_cast<uint64_t>(std::llround(clamped));
  if (below < 0)
    return table_[above];
  if (above < 0)
    return table_[below];
  switch (relation) {
    case FrequencyRelation::kLowestAtOrAbove:
      return table_[above];
    case FrequencyRelation::kHighestAtOrBelow:
      return table_[below];
    case FrequencyRelation::kClosest: {
      // cpufreq_table_find_index_ac(): a tie goes to the lower entry.
      double down = clamped - static_cast<double>(table_[below]);
      double up = static_cast<double>(table_[above]) - clamped;
      return up < down ? table_[above] : table_[below];
    }
  }
  return table_[below];
}

// A sampler that failed to read a limit sends 0; fall back to the table so
// that a policy still has a range to work in.
CoreLimits FrequencyTable::limitsOf(const CoreReading& core) const {
  CoreLimits limits;
  uint64_t table_min = table_.empty() ? 0 : *std::min_element(table_.begin(), table_.end());
  uint64_t table_max = table_.empty() ? 0 : *std::max_element(table_.begin(), table_.end());
  limits.min_khz = core.min_khz ? core.min_khz : table_min;
  limits.max_khz = core.max_khz ? core.max_khz : table_max;
  if (limits.max_khz == 0)
    limits.max_khz = std::max(core.cur_khz, limits.min_khz);
  if (limits.min_khz > limits.max_khz)
    limits.min_khz = limits.max_khz;
  limits.cpuinfo_min_khz = core.cpuinfo_min_khz ? core.cpuinfo_min_khz
                                                : (table_min ? std::min(table_min, limits.min_khz) : limits.min_khz);
  limits.cpuinfo_max_khz = core.cpuinfo_max_khz ? core.cpuinfo_max_khz
                                                : std::max(table_max, limits.max_khz);
  if (limits.cpuinfo_min_khz > limits.cpuinfo_max_khz)
    limits.cpuinfo_min_khz = limits.cpuinfo_max_khz;
  return limits;
}

double FrequencyTable::smallestStepKhz() const {
  uint64_t best = 0;
  for (size_t i = 1; i < table_.size(); ++i) {
    uint64_t a = table_[i - 1], b = table_[i];
    uint64_t d = a > b ? a - b : b - a;
    if (d > 0 && (best == 0 || d < best))
      best = d;
  }
  return best ? static_cast<double>(best) : kDefaultStepKhz;
}

}  // namespace nk
