#include "energy_attribution.h"

#include <algorithm>
#include <cmath>

namespace nk {

namespace {

double nonNegative(double value) { return std::isfinite(value) && value > 0 ? value : 0.0; }

}  // namespace

std::optional<uint64_t> EnergyAttribution::deltaUj(uint64_t previous_uj, uint64_t now_uj, uint64_t range_uj) {
  if (now_uj >= previous_uj) return now_uj - previous_uj;
  // Backwards: a wrap, which only a known range can undo; a previous read
  // beyond the range means the counter was reset, not wrapped.
  if (range_uj == 0 || previous_uj > range_uj) return std::nullopt;
  return (range_uj - previous_uj) + now_uj;
}

EnergySplit EnergyAttribution::account(uint64_t sample_seq, std::span<const PackageCounter> counters,
                                       std::span<const AppPackageUse> apps,
                                       const std::map<uint32_t, double>& other_cpu_s) {
  EnergySplit split;
  pending_apps_.insert(pending_apps_.end(), apps.begin(), apps.end());
  for (const auto& [package, cpu_s] : other_cpu_s) pending_other_[package] += nonNegative(cpu_s);
  if (last_seq_ && *last_seq_ == sample_seq) return split;
  const bool baseline = !last_seq_;
  last_seq_ = sample_seq;

  // CPU time per package: each app's, and everyone's.
  std::map<uint32_t, std::map<uint64_t, double>> app_cpu;
  std::map<uint32_t, double> total_cpu = pending_other_;
  for (const AppPackageUse& use : pending_apps_) {
    double cpu_s = nonNegative(use.cpu_s);
    app_cpu[use.package][use.app_id] += cpu_s;
    total_cpu[use.package] += cpu_s;
  }
  pending_apps_.clear();
  pending_other_.clear();

  for (const PackageCounter& counter : counters) {
    auto last = last_uj_.find(counter.package);
    std::optional<uint64_t> delta_uj;
    if (last != last_uj_.end()) delta_uj = deltaUj(last->second, counter.raw_uj, counter.max_energy_range_uj);
    last_uj_[counter.package] = counter.raw_uj;
    if (baseline || !delta_uj) continue;  // a package that appeared, or a counter reset: from here on
    double package_j = static_cast<double>(*delta_uj) / 1e6;
    split.packages_j += package_j;
    double total = total_cpu[counter.package];
    double attributed = 0;
    if (total > 0)
      for (const auto& [app_id, cpu_s] : app_cpu[counter.package]) {
        double joules = package_j * cpu_s / total;
        if (joules <= 0) continue;
        split.app_j[app_id] += joules;
        attributed += joules;
      }
    split.unattributed_j += std::max(0.0, package_j - attributed);
  }
  packages_j_ += split.packages_j;
  unattributed_j_ += split.unattributed_j;
  return split;
}

}  // namespace nk
