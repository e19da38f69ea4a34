#include "energy/fair_share.h"

#include <algorithm>
#include <cmath>

namespace nk {

// Water-filling: an app that asks for less than an equal split keeps its
// demand and the rest is split again among the others, so a small app is
// never squeezed by a big one and a big one gets what is left.
void FairShare::divide(double capacity, std::span<const double> demands, std::span<double> out) {
  size_t n = std::min(demands.size(), out.size());
  for (size_t i = 0; i < n; ++i)
    out[i] = 0.0;
  if (!(capacity > 0.0) || !std::isfinite(capacity))
    return;
  // Nobody can use more than the whole; NaN and negative ask for nothing.
  auto demandOf = [&](size_t i) {
    double d = demands[i];
    return d > 0.0 ? std::min(d, capacity) : 0.0;
  };
  double left = capacity;
  // Each pass settles at least one app or hands out the rest; n passes at most.
  for (size_t pass = 0; pass <= n && left > 1e-12; ++pass) {
    size_t open = 0;
    for (size_t i = 0; i < n; ++i)
      if (demandOf(i) - out[i] > 1e-12)
        ++open;
    if (open == 0)
      break;
    double level = left / static_cast<double>(open);
    bool settled = false;
    for (size_t i = 0; i < n; ++i) {
      double want = demandOf(i) - out[i];
      if (want > 1e-12 && want <= level) {
        out[i] += want;
        left -= want;
        settled = true;
      }
    }
    if (!settled) {
      for (size_t i = 0; i < n; ++i)
        if (demandOf(i) - out[i] > 1e-12)
          out[i] += level;
      left = 0.0;
    }
  }
}

// Integer cores: one at a time, round robin over apps that want more.
void FairShare::divide(uint32_t capacity, std::span<const uint32_t> demands, std::span<uint32_t> out) {
  size_t n = std::min(demands.size(), out.size());
  for (size_t i = 0; i < n; ++i)
    out[i] = 0;
  uint32_t left = capacity;
  bool progress = true;
  while (left > 0 && progress) {
    progress = false;
    for (size_t i = 0; i < n && left > 0; ++i) {
      if (out[i] < demands[i]) {
        ++out[i];
        --left;
        progress = true;
      }
    }
  }
}

}  // namespace nk
