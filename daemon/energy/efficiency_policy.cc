#include "energy/efficiency_policy.h"

#include <algorithm>
#include <cmath>

#include "energy/frequency_table.h"

namespace nk {

namespace {

PolicyConfig widthFirst(PolicyConfig config) {
  config.thermal.dct_width_first = true;
  config.thermal.swap_to_coolest_k = 0.1;
  return config;
}

}  // namespace

EfficiencyPolicy::EfficiencyPolicy(const PolicyConfig& config)
    : tunables_(config.efficiency), inner_(widthFirst(config)) {
  if (!(tunables_.max_slowdown_pct >= 0.0) || !std::isfinite(tunables_.max_slowdown_pct))
    tunables_.max_slowdown_pct = EfficiencyTunables{}.max_slowdown_pct;
  if (!(tunables_.omega > 0.0 && tunables_.omega <= 1.0))
    tunables_.omega = EfficiencyTunables{}.omega;
}

double EfficiencyPolicy::ceilingKhz(double m, double slowdown, double fmax_khz) {
  m = std::clamp(m, 0.0, 1.0);
  if (m >= 1.0)
    return 0.0;
  // (1-m) f_max / f + m <= 1 + slowdown
  return (1.0 - m) * fmax_khz / (1.0 + std::max(0.0, slowdown) - m);
}

EfficiencyPolicy::ThreadState& EfficiencyPolicy::threadFor(int32_t tid) {
  for (ThreadState& t : threads_)
    if (t.tid == tid)
      return t;
  threads_.push_back({tid, 0.0, false, false});
  return threads_.back();
}

// The snapshot the thermal-aware policy sees: each core that runs a thread
// with measured stalls has its max limit lowered to that thread's ceiling
// (the highest ceiling when threads share a core).
EnergySnapshot EfficiencyPolicy::withCeilings(const EnergySnapshot& snapshot) {
  EnergySnapshot limited = snapshot;
  // stepDct follows stepDvfs with the same snapshot: observe it once.
  const bool observe = snapshot.time_s != last_observed_s_;
  if (observe) {
    last_observed_s_ = snapshot.time_s;
    for (ThreadState& t : threads_)
      t.present = false;
  }
  FrequencyTable table(snapshot.freq_table_khz);
  std::vector<double> ceiling(limited.cores.size(), -1.0);
  for (const AppSample& app : snapshot.apps)
    for (const ThreadSample& ts : app.thread_samples) {
      ThreadState& t = threadFor(ts.tid);
      t.present = true;
      const CoreReading* core = nullptr;
      size_t index = 0;
      for (size_t i = 0; i < snapshot.cores.size(); ++i)
        if (ts.core >= 0 && snapshot.cores[i].id == static_cast<uint32_t>(ts.core)) {
          core = &snapshot.cores[i];
          index = i;
        }
      if (!core)
        continue;
      CoreLimits limits = table.limitsOf(*core);
      double fmax = static_cast<double>(limits.cpuinfo_max_khz ? limits.cpuinfo_max_khz : limits.max_khz);
      if (observe && ts.stall_fraction >= 0.0 && std::isfinite(ts.stall_fraction) && core->cur_khz > 0 && fmax > 0) {
        // Stalls measured at the current clock, expressed at f_max.
        double s = std::clamp(ts.stall_fraction, 0.0, 1.0);
        double m = s / ((1.0 - s) * static_cast<double>(core->cur_khz) / fmax + s);
        t.m = t.seen ? tunables_.omega * m + (1.0 - tunables_.omega) * t.m : m;
        t.seen = true;
      }
      if (!t.seen)
        continue;
      double khz = ceilingKhz(t.m, tunables_.max_slowdown_pct / 100.0, fmax);
      ceiling[index] = std::max(ceiling[index], khz);
    }
  if (observe)
    std::erase_if(threads_, [](const ThreadState& t) { return !t.present; });
  for (size_t i = 0; i < limited.cores.size(); ++i) {
    if (ceiling[i] < 0.0)
      continue;
    CoreReading& core = limited.cores[i];
    CoreLimits limits = table.limitsOf(core);
    // The table frequency at or above the ceiling, inside the core's limits.
    uint64_t khz = table.resolve(ceiling[i], limits, FrequencyRelation::kLowestAtOrAbove);
    core.max_khz = std::max(limits.min_khz, std::min(limits.max_khz, khz));
  }
  return limited;
}

// The thermal-aware policy leaves a core's clock alone when it has no
// budget to control; the ceiling still applies there.
void EfficiencyPolicy::applyCeilings(const EnergySnapshot& limited, EnergyDecision& decision) const {
  FrequencyTable table(limited.freq_table_khz);
  for (CoreDecision& cd : decision.cores) {
    for (const CoreReading& core : limited.cores) {
      if (core.id != cd.core)
        continue;
      CoreLimits limits = table.limitsOf(core);
      bool limited_here = core.max_khz < (core.cpuinfo_max_khz ? core.cpuinfo_max_khz : core.max_khz);
      if (cd.target_khz == 0 && limited_here) {
        cd.target_khz = limits.max_khz;
        cd.governor = Governor::kUserspace;
      } else if (cd.target_khz > limits.max_khz) {
        cd.target_khz = limits.max_khz;
      }
    }
  }
}

// One clock per team. Eq. 8 runs per thread, and noisy per-thread readings
// walk the threads' clocks apart (on the emulated node the slowest of a
// team ran at 0.71 of the team's mean); at a barrier the slowest thread
// sets the pace, so the power the faster ones draw buys nothing. Every
// controlled core of an app gets the mean of their clocks (rounded down,
// so the app's power does not grow), under its own ceiling.
void EfficiencyPolicy::equaliseTeams(const EnergySnapshot& limited, EnergyDecision& decision) const {
  FrequencyTable table(limited.freq_table_khz);
  for (const AppDecision& app : decision.apps) {
    std::vector<CoreDecision*> team;
    for (const ThreadDecision& td : app.thread_decisions) {
      int32_t core = td.core;
      if (core < 0)
        for (const AppSample& sample : limited.apps)
          if (sample.id == app.id)
            for (const ThreadSample& ts : sample.thread_samples)
              if (ts.tid == td.tid)
                core = ts.core;
      for (CoreDecision& cd : decision.cores)
        if (core >= 0 && cd.core == static_cast<uint32_t>(core) && cd.target_khz > 0 &&
            std::find(team.begin(), team.end(), &cd) == team.end())
          team.push_back(&cd);
    }
    if (team.size() < 2)
      continue;
    double mean = 0.0;
    for (const CoreDecision* cd : team)
      mean += static_cast<double>(cd->target_khz);
    mean /= static_cast<double>(team.size());
    for (CoreDecision* cd : team)
      for (const CoreReading& core : limited.cores)
        if (core.id == cd->core)
          cd->target_khz = table.resolve(mean, table.limitsOf(core), FrequencyRelation::kHighestAtOrBelow);
  }
}

// Both steps: the thermal-aware one on the limited snapshot, then the
// ceilings and one clock per team on what it decided.
EnergyDecision EfficiencyPolicy::step(const EnergySnapshot& snapshot,
                                      EnergyDecision (ThermalAwarePolicy::*inner_step)(const EnergySnapshot&)) {
  EnergySnapshot limited = withCeilings(snapshot);
  EnergyDecision decision = (inner_.*inner_step)(limited);
  applyCeilings(limited, decision);
  equaliseTeams(limited, decision);
  decision.reason = "efficiency/" + decision.reason;
  return decision;
}

EnergyDecision EfficiencyPolicy::stepDvfs(const EnergySnapshot& snapshot) {
  return step(snapshot, &ThermalAwarePolicy::stepDvfs);
}

EnergyDecision EfficiencyPolicy::stepDct(const EnergySnapshot& snapshot) {
  return step(snapshot, &ThermalAwarePolicy::stepDct);
}

}  // namespace nk
