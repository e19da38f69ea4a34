#include "energy_counter.h"

namespace nk {

// A read below the previous one means the counter passed range_uj_ and
// restarted at 0, so the energy spent is what was left to the top plus what
// was counted since. Strictly the counter has range_uj_ + 1 states, which
// would add 1 uJ per wrap; against ranges of hundreds of kJ that is noise,
// so it is left out. A wrap is only visible once per read: the sampler must
// read more often than range / peak power (about 20 minutes at 200 W for
// the usual 262 kJ range).
void EnergyCounter::update(uint64_t raw_uj, int64_t now_ns) {
  if (!last_raw_) {
    last_raw_ = raw_uj;
    last_ns_ = now_ns;
    return;
  }
  const uint64_t last = *last_raw_;
  uint64_t delta_uj = 0;
  if (raw_uj >= last) {
    delta_uj = raw_uj - last;
  } else {
    ++wraps_;
    // A previous read above the advertised range (a bogus range, or the
    // counter was reset) leaves nothing to add up to the top: count only
    // what was read since the restart rather than underflow.
    delta_uj = (last <= range_uj_ ? range_uj_ - last : 0) + raw_uj;
  }
  total_uj_ += delta_uj;

  // Two reads at the same instant (or a clock that went back) give no rate;
  // keep the last good figure but move on, so the next interval is measured
  // from this read.
  const int64_t dt_ns = now_ns - last_ns_;
  if (dt_ns > 0) watts_ = (static_cast<double>(delta_uj) / 1e6) / (static_cast<double>(dt_ns) / 1e9);
  last_raw_ = raw_uj;
  last_ns_ = now_ns;
}

}  // namespace nk
