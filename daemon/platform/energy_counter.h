#pragma once

#include <cstdint>
#include <optional>

namespace nk {

// Turns successive reads of a wrapping RAPL energy_uj counter into a
// monotonic energy and a power. Pure arithmetic, so it is unit tested alone.
class EnergyCounter {
 public:
  explicit EnergyCounter(uint64_t max_energy_range_uj) : range_uj_(max_energy_range_uj) {}

  // Feeds one read taken at monotonic time `now_ns`. A read smaller than the
  // previous one is a wrap (the counter restarts at 0 after range_uj_).
  void update(uint64_t raw_uj, int64_t now_ns);

  double joules() const { return static_cast<double>(total_uj_) / 1e6; }
  // dE/dt between the last two reads; nullopt until there are two.
  std::optional<double> watts() const { return watts_; }
  uint64_t wraps() const { return wraps_; }

 private:
  uint64_t range_uj_;
  std::optional<uint64_t> last_raw_;
  int64_t last_ns_ = 0;
  uint64_t total_uj_ = 0;
  uint64_t wraps_ = 0;
  std::optional<double> watts_;
};

}  // namespace nk
