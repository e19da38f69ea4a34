#include "node_simulator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "platform/emulated/physics_model.h"

namespace nk::sim {

namespace {

constexpr const char* kAppId = "sim";

// Stalled cores switch less: a memory-bound phase's activity factor.
double activity(double memory_boundness) { return 1.0 - 0.5 * std::clamp(memory_boundness, 0.0, 1.0); }

// Work seconds (at f_ref) done per second at `khz`.
double progressRate(double memory_boundness, uint64_t khz, uint64_t ref_khz) {
  if (khz == 0 || ref_khz == 0) return 0.0;
  double m = std::clamp(memory_boundness, 0.0, 1.0);
  return 1.0 / ((1.0 - m) * static_cast<double>(ref_khz) / static_cast<double>(khz) + m);
}

}  // namespace

NodeSimulator::NodeSimulator(NodeProfile profile, PolicyConfig config, Options options)
    : profile_(std::move(profile)), config_(config), options_(options) {}

SimulationResult NodeSimulator::run(const WorkloadModel& workload, EnergyPolicy& policy) {
  SimulationResult result;
  const uint32_t cores = profile_.cores();
  if (cores == 0 || profile_.frequencies_khz.empty() || workload.phases.empty()) return result;
  const uint64_t fmin = profile_.frequencies_khz.front();
  const uint64_t fmax = profile_.frequencies_khz.back();
  const uint32_t c_max = options_.max_threads ? std::min(options_.max_threads, cores) : cores;

  PhysicsModel model(profile_);
  std::vector<uint64_t> core_khz(cores, fmax);
  std::vector<int32_t> thread_core(c_max);
  for (uint32_t t = 0; t < c_max; ++t) thread_core[t] = static_cast<int32_t>(t);
  uint32_t d = c_max;

  const double dt = options_.step_s;
  const double dvfs_s = config_.dvfsIntervalS();
  const uint32_t per_dct = std::max<uint32_t>(1, config_.dvfs_per_dct);
  double next_dvfs = dvfs_s;
  uint32_t dvfs_ticks = 0;

  // Progress: phase index, repeat index, work left in the phase.
  size_t phase = 0;
  int round = 0;
  double left = workload.phases[0].work_core_s;

  std::vector<double> thread_cycles(c_max, 0.0);  // since the last DVFS step
  double interval_energy_start = 0.0, interval_time_start = 0.0;
  double energy_at_dvfs = 0.0;
  double last_power_w = 0.0;
  double temp_sum = 0.0, std_sum = 0.0, d_sum = 0.0;
  uint64_t over = 0;

  auto packageEnergy = [&] {
    double e = 0.0;
    for (uint32_t p = 0; p < profile_.packages; ++p) e += model.packageEnergyJ(p);
    return e;
  };

  std::vector<double> utilisation(cores, 0.0);
  double now = 0.0;
  // One dT_DVFS step of the policy, and every N-th a dT_DCT step; the first
  // runs at t = 0 so that the policy, not the initial state, sets the pace.
  auto decide = [&](bool tick) {
    double energy = packageEnergy();
    last_power_w = tick ? (energy - energy_at_dvfs) / dvfs_s : 0.0;
    energy_at_dvfs = energy;

    EnergySnapshot snapshot;
    snapshot.time_s = now;
    snapshot.freq_table_khz = profile_.frequencies_khz;
    snapshot.workload_unit = WorkloadUnit::kCycles;
    for (uint32_t c = 0; c < cores; ++c) {
      CoreReading core;
      core.id = c;
      core.cur_khz = core_khz[c];
      core.min_khz = fmin;
      core.max_khz = fmax;
      core.cpuinfo_min_khz = fmin;
      core.cpuinfo_max_khz = fmax;
      core.temp_c = model.coreTemperatureC(c);
      core.util = utilisation[c];
      snapshot.cores.push_back(core);
    }
    for (uint32_t p = 0; p < profile_.packages; ++p) snapshot.package_power_w.push_back(model.packagePowerW(p));
    AppSample app;
    app.id = kAppId;
    app.budget_w = options_.budget_w;
    app.max_threads = c_max;
    app.threads = d;
    app.power_w = last_power_w;
    for (uint32_t t = 0; t < d; ++t) app.thread_samples.push_back({static_cast<int32_t>(t + 1), thread_core[t], thread_cycles[t]});
    snapshot.apps.push_back(app);
    std::fill(thread_cycles.begin(), thread_cycles.end(), 0.0);

    bool dct = tick && ++dvfs_ticks % per_dct == 0;
    EnergyDecision decision = policy.stepDvfs(snapshot);
    if (dct) decision = policy.stepDct(snapshot);

    for (const CoreDecision& cd : decision.cores)
      if (cd.core < cores && cd.target_khz > 0) core_khz[cd.core] = std::clamp(cd.target_khz, fmin, fmax);
    for (const AppDecision& ad : decision.apps) {
      if (ad.id != kAppId) continue;
      if (ad.threads > 0) d = std::clamp<uint32_t>(ad.threads, 1, c_max);
      for (const ThreadDecision& td : ad.thread_decisions)
        if (td.tid >= 1 && static_cast<uint32_t>(td.tid) <= c_max && td.core >= 0 &&
            static_cast<uint32_t>(td.core) < cores)
          thread_core[td.tid - 1] = td.core;
    }

    if (dct) {
      double interval_s = now - interval_time_start;
      double interval_power = interval_s > 0 ? (energy - interval_energy_start) / interval_s : 0.0;
      if (options_.budget_w > 0 && now > 2.0) {
        ++result.dct_intervals;
        if (interval_power > options_.budget_w * 1.05) ++over;
      }
      interval_energy_start = energy;
      interval_time_start = now;
    }
  };

  decide(false);
  while (now < options_.max_time_s) {
    const WorkloadPhase& ph = workload.phases[phase];
    // The serial part runs on thread 0, the parallel part on D threads that
    // meet at a barrier: the slowest thread sets the pace. Waiting threads
    // spin (libomp's blocktime), so every one of the D cores is busy.
    double serial = std::clamp(1.0 - ph.parallel_fraction, 0.0, 1.0);
    double slowest = 1e300;
    for (uint32_t t = 0; t < d; ++t)
      slowest = std::min(slowest, progressRate(ph.memory_boundness, core_khz[thread_core[t]], fmax));
    double lead = progressRate(ph.memory_boundness, core_khz[thread_core[0]], fmax);
    // Work seconds per second of the whole team for this phase's mix.
    double rate = 1.0 / (serial / std::max(lead, 1e-12) + (1.0 - serial) / std::max(slowest * d, 1e-12));

    std::fill(utilisation.begin(), utilisation.end(), 0.0);
    for (uint32_t t = 0; t < d; ++t) utilisation[thread_core[t]] = activity(ph.memory_boundness);
    for (uint32_t c = 0; c < cores; ++c) {
      model.setFrequencyKhz(c, core_khz[c]);
      model.setUtilisation(c, std::max(profile_.idle_utilisation, utilisation[c]));
    }
    double step = std::min(dt, left / std::max(rate, 1e-12));
    model.step(step);
    now += step;
    if (options_.on_step) {
      double power = 0.0;
      for (uint32_t p = 0; p < profile_.packages; ++p) power += model.packagePowerW(p);
      options_.on_step(now, step, power);
    }
    left -= rate * step;
    for (uint32_t t = 0; t < d; ++t)
      thread_cycles[t] += static_cast<double>(core_khz[thread_core[t]]) * 1000.0 * step;

    double mean = 0.0;
    for (uint32_t c = 0; c < cores; ++c) {
      double temp = model.coreTemperatureC(c);
      mean += temp;
      result.peak_temp_c = std::max(result.peak_temp_c, temp);
    }
    mean /= cores;
    double var = 0.0;
    for (uint32_t c = 0; c < cores; ++c) var += std::pow(model.coreTemperatureC(c) - mean, 2);
    temp_sum += mean * step;
    std_sum += std::sqrt(var / cores) * step;
    d_sum += d * step;

    if (left <= 1e-12) {
      if (++phase == workload.phases.size()) {
        phase = 0;
        if (++round >= workload.repeat) break;
      }
      left = workload.phases[phase].work_core_s;
    }

    if (now + 1e-12 < next_dvfs) continue;
    next_dvfs += dvfs_s;
    decide(true);
  }

  result.time_s = now;
  result.energy_j = packageEnergy();
  if (now > 0) {
    result.avg_temp_c = temp_sum / now;
    result.temp_std_c = std_sum / now;
    result.mean_threads = d_sum / now;
  }
  result.over_budget_frac = result.dct_intervals ? static_cast<double>(over) / result.dct_intervals : 0.0;
  return result;
}

}  // namespace nk::sim
