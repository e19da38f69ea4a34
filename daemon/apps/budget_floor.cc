#include "budget_floor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace nk {

uint32_t BudgetFloor::floorThreads(uint32_t max_threads) {
  return std::max<uint32_t>(1, std::min(kDctMinThreads, max_threads));
}

std::optional<uint64_t> BudgetFloor::floorMw(uint32_t max_threads) const {
  if (!model_) return std::nullopt;
  std::optional<double> watts = model_(floorThreads(max_threads));
  if (!watts || !std::isfinite(*watts) || *watts <= 0.0) return std::nullopt;
  return static_cast<uint64_t>(std::llround(*watts * 1000.0));
}

std::string BudgetFloor::warning(uint64_t budget_mw, uint64_t floor_mw) {
  if (budget_mw == 0 || floor_mw == 0 || budget_mw >= floor_mw) return "";
  char text[192];
  std::snprintf(text, sizeof text,
                "budget %.1f W is below what the app can reach (about %.1f W at its fewest threads and the "
                "lowest clock): accepted, but it cannot be met",
                static_cast<double>(budget_mw) / 1000.0, static_cast<double>(floor_mw) / 1000.0);
  return text;
}

}  // namespace nk
