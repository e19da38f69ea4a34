#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nk::client {

// Parses NODEKEEPER_POWER_BUDGET_MW: a positive decimal count of milliwatts.
class PowerBudgetParser {
 public:
  [[nodiscard]] static int parse(std::string_view text, uint64_t* mw, std::string* error);
};

}  // namespace nk::client
