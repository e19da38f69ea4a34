#pragma once

#include "energy/fixed_frequency_policy.h"

namespace nk {

// Linux's powersave governor: every core at its lowest allowed frequency.
class PowersavePolicy final : public FixedFrequencyPolicy {
 public:
  PowersavePolicy() : FixedFrequencyPolicy(false) {}
  std::string_view name() const override { return "powersave"; }
};

}  // namespace nk
