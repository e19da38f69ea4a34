#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace nk {

// One package's RAPL energy counter as read at the end of an interval.
struct PackageCounter {
  uint32_t package = 0;
  uint64_t raw_uj = 0;
  uint64_t max_energy_range_uj = 0;  // where it wraps; 0: unknown
};

// CPU time an app's threads got on one package's cores over the interval.
struct AppPackageUse {
  uint64_t app_id = 0;
  uint32_t package = 0;
  double cpu_s = 0;
};

// What one interval's energy went to.
struct EnergySplit {
  std::map<uint64_t, double> app_j;  // by app id; apps that got nothing are left out
  double packages_j = 0;             // the packages' energy over the interval
  double unattributed_j = 0;         // packages_j minus what the apps got
};

// Splits each package's energy over an interval among the apps that used
// its cores, in proportion to their CPU time there. The share of a package
// that other processes used (`other_cpu_s`) stays unattributed, and so does
// a package's energy over an interval in which nothing at all used it. Idle
// cores and uncore are not a user of their own: their energy goes with the
// CPU time that did run on the package, the way AppLoadAccounting charges
// the node's power (a node whose only load is two apps has all its energy
// on those two).
//
// Pure arithmetic: the caller reads the counters and the CPU times.
class EnergyAttribution {
 public:
  // `counters`: the packages' counters at the end of the interval, read in
  // telemetry sample `sample_seq`. `apps`: what the apps did since the
  // previous call; `other_cpu_s`: per package id, CPU time of processes
  // that are no registered app. A call with the sample of the previous call
  // (no new reading yet) keeps the CPU times for the next one and returns
  // an empty split. The first call only sets the baseline: everything
  // before it is nobody's.
  EnergySplit account(uint64_t sample_seq, std::span<const PackageCounter> counters,
                      std::span<const AppPackageUse> apps, const std::map<uint32_t, double>& other_cpu_s);

  // Energy over every interval so far, and what of it stayed unattributed.
  double packagesJ() const { return packages_j_; }
  double unattributedJ() const { return unattributed_j_; }

  // Joules between two reads of a counter that wraps at `range_uj` (a read
  // below the previous one wrapped once); nullopt for a read that cannot
  // follow the previous one (backwards with no known range, or past it).
  static std::optional<uint64_t> deltaUj(uint64_t previous_uj, uint64_t now_uj, uint64_t range_uj);

 private:
  std::optional<uint64_t> last_seq_;
  std::map<uint32_t, uint64_t> last_uj_;  // by package
  std::vector<AppPackageUse> pending_apps_;
  std::map<uint32_t, double> pending_other_;
  double packages_j_ = 0;
  double unattributed_j_ = 0;
};

}  // namespace nk
