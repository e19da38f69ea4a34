#pragma once

#include "energy/fixed_frequency_policy.h"

namespace nk {

// Linux's performance governor: every core at its highest allowed frequency.
class PerformancePolicy final : public FixedFrequencyPolicy {
 public:
  PerformancePolicy() : FixedFrequencyPolicy(true) {}
  std::string_view name() const override { return "performance"; }
};

}  // namespace nk
