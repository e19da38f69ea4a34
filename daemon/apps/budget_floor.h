#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace nk {

// The least power an app can be held to: D at DCT's floor (Algorithm 1 of
// the paper (Shafik et al.) never goes below 2 threads, or C when C < 2)
// with every core at the lowest clock. A budget under it cannot be met; it
// is still taken (the app runs as lean as it can), with a warning.
//
// The estimate is the node's power in that state, as the energy manager
// measures an app (its share of the node's power: with one app, all of it,
// the uncore and the idle cores included). Where it comes from is the
// caller's: on the emulated node, its profile's model at the lowest clock
// and the ambient temperature (leakage grows with heat, so this is a lower
// bound: a budget called unattainable truly is); unknown on hardware for
// now (no warning rather than a wrong one).
class BudgetFloor {
 public:
  // The node's power in W with `busy_cores` cores fully busy at the lowest
  // clock and the rest idle; nullopt: not known on this node.
  using PowerAtLowestClock = std::function<std::optional<double>(uint32_t busy_cores)>;

  static constexpr uint32_t kDctMinThreads = 2;

  BudgetFloor() = default;
  explicit BudgetFloor(PowerAtLowestClock model) : model_(std::move(model)) {}

  // D's floor for an app of `max_threads` (C).
  static uint32_t floorThreads(uint32_t max_threads);
  // The floor in mW; nullopt when the node gives no estimate.
  std::optional<uint64_t> floorMw(uint32_t max_threads) const;
  // The reply's warning for a budget under `floor_mw`; "" when it can be met.
  static std::string warning(uint64_t budget_mw, uint64_t floor_mw);

 private:
  PowerAtLowestClock model_;
};

}  // namespace nk
