#include "node_simulator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "platform/emulated/emulated_governor.h"
#include "platform/emulated/emulated_sysfs_tree.h"
#include "platform/emulated/physics_model.h"
#include "reliability_model.h"

namespace nk::sim {

namespace {

constexpr const char* kAppId = "sim";

// Where a thread's time goes for one work-second of a phase (wall seconds
// at the current D and clocks); their sum over a thread is the phase's
// wall time per work-second, the same for every team member.
struct ThreadTime {
  double compute = 0, stall = 0, spin = 0, blocked = 0;
  double busy() const { return compute + stall + spin; }
};

// Walks the prologue once, then the phases `repeat` times.
class ProgramCursor {
 public:
  explicit ProgramCursor(const WorkloadModel& w) : w_(w) {
    if (w_.prologue.empty()) in_prologue_ = false;
    done_ = w_.phases.empty() && w_.prologue.empty();
    if (!done_ && !in_prologue_ && w_.repeat < 1) done_ = true;
  }
  bool done() const { return done_; }
  const WorkloadPhase& phase() const { return in_prologue_ ? w_.prologue[index_] : w_.phases[index_]; }
  void next() {
    ++index_;
    if (in_prologue_) {
      if (index_ < w_.prologue.size()) return;
      in_prologue_ = false;
      index_ = 0;
      if (w_.phases.empty() || w_.repeat < 1) done_ = true;
      return;
    }
    if (index_ < w_.phases.size()) return;
    index_ = 0;
    if (++round_ >= w_.repeat) done_ = true;
  }

 private:
  const WorkloadModel& w_;
  bool in_prologue_ = true;
  bool done_ = false;
  size_t index_ = 0;
  int round_ = 0;
};

}  // namespace

NodeSimulator::NodeSimulator(NodeProfile profile, PolicyConfig config, Options options)
    : profile_(std::move(profile)), config_(config), options_(options) {}

SimulationResult NodeSimulator::run(const WorkloadModel& workload, EnergyPolicy& policy) {
  SimulationResult result;
  const uint32_t cores = profile_.cores();
  if (cores == 0 || profile_.frequencies_khz.empty()) return result;
  const uint64_t fmin = profile_.frequencies_khz.front();
  const uint64_t fmax = profile_.frequencies_khz.back();
  const uint32_t c_max = options_.max_threads ? std::min(options_.max_threads, cores) : cores;

  PhysicsModel model(profile_);
  if (std::isnan(options_.initial_temp_c)) {
    for (uint32_t c = 0; c < cores; ++c) {
      model.setFrequencyKhz(c, fmin);
      model.setUtilisation(c, profile_.idle_utilisation);
    }
    model.step(600.0);  // some 40 heatsink time constants
  } else {
    for (uint32_t c = 0; c < cores; ++c) model.setCoreTemperatureC(c, options_.initial_temp_c);
    for (uint32_t p = 0; p < profile_.packages; ++p) model.setHeatsinkTemperatureC(p, options_.initial_temp_c);
  }
  // Energy spent settling is not the program's.
  std::vector<double> energy_base(profile_.packages);
  for (uint32_t p = 0; p < profile_.packages; ++p) energy_base[p] = model.packageEnergyJ(p);
  ReliabilityModel reliability(cores, profile_.ambient_c, profile_.voltage_max_v);
  std::vector<uint64_t> core_khz(cores, fmax);
  // Cores a policy leaves alone (target 0) run under the node's default
  // governor, as the daemon hands them back to it; its kernel side is the
  // emulated node's.
  std::vector<uint8_t> governed(cores, 1);
  EmulatedGovernor governor(profile_);
  const EmulatedPolicyControls governor_controls{profile_.default_governor, fmin, fmax, std::nullopt};
  std::vector<int32_t> thread_core(c_max);
  for (uint32_t t = 0; t < c_max; ++t) thread_core[t] = static_cast<int32_t>(t);
  uint32_t d = c_max;

  const double dt = options_.step_s;
  const double dvfs_s = config_.dvfsIntervalS();
  const uint32_t per_dct = std::max<uint32_t>(1, config_.dvfs_per_dct);
  double next_dvfs = dvfs_s;
  uint32_t dvfs_ticks = 0;

  ProgramCursor cursor(workload);
  double left = cursor.done() ? 0.0 : cursor.phase().work_core_s;

  // Per thread and per core, summed since the last DVFS step.
  std::vector<double> thread_cycles(c_max, 0.0), thread_stall_s(c_max, 0.0), thread_busy_s(c_max, 0.0);
  std::vector<double> core_busy_s(cores, 0.0);
  std::vector<uint8_t> app_core(cores, 0);
  double app_energy = 0.0;                 // in the budget's scope, whole run
  double app_energy_at_dvfs = 0.0, node_energy_at_dvfs = 0.0, time_at_dvfs = 0.0;
  double interval_app_energy_start = 0.0, interval_node_energy_start = 0.0, interval_time_start = 0.0;
  double temp_sum = 0.0, std_sum = 0.0, d_sum = 0.0, mhz_sum = 0.0;
  uint64_t over = 0;
  double now = 0.0;

  auto packageEnergy = [&] {
    double e = 0.0;
    for (uint32_t p = 0; p < profile_.packages; ++p) e += model.packageEnergyJ(p) - energy_base[p];
    return e;
  };
  auto scopedEnergy = [&] { return options_.budget_scope == BudgetScope::kNode ? packageEnergy() : app_energy; };

  // One dT_DVFS step of the policy, and every N-th a dT_DCT step; the first
  // runs at t = 0 so that the policy, not the initial state, sets the pace.
  auto decide = [&](bool tick) {
    double interval = now - time_at_dvfs;
    double node_energy = packageEnergy();
    double scoped = scopedEnergy();
    double scoped_at_dvfs = options_.budget_scope == BudgetScope::kNode ? node_energy_at_dvfs : app_energy_at_dvfs;

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
      core.util = interval > 0 ? std::clamp(core_busy_s[c] / interval, 0.0, 1.0) : 0.0;
      snapshot.cores.push_back(core);
    }
    for (uint32_t p = 0; p < profile_.packages; ++p) snapshot.package_power_w.push_back(model.packagePowerW(p));
    AppSample app;
    app.id = kAppId;
    app.budget_w = options_.budget_w;
    app.max_threads = c_max;
    app.threads = d;
    app.power_w = tick && interval > 0 ? (scoped - scoped_at_dvfs) / interval : 0.0;
    for (uint32_t t = 0; t < d; ++t) {
      ThreadSample sample{static_cast<int32_t>(t + 1), thread_core[t], thread_cycles[t]};
      sample.stall_fraction = thread_busy_s[t] > 0 ? thread_stall_s[t] / thread_busy_s[t] : -1.0;
      app.thread_samples.push_back(sample);
    }
    snapshot.apps.push_back(app);
    std::fill(thread_cycles.begin(), thread_cycles.end(), 0.0);
    std::fill(thread_stall_s.begin(), thread_stall_s.end(), 0.0);
    std::fill(thread_busy_s.begin(), thread_busy_s.end(), 0.0);
    std::fill(core_busy_s.begin(), core_busy_s.end(), 0.0);
    node_energy_at_dvfs = node_energy;
    app_energy_at_dvfs = app_energy;
    time_at_dvfs = now;

    bool dct = tick && ++dvfs_ticks % per_dct == 0;
    EnergyDecision decision = policy.stepDvfs(snapshot);
    if (dct) decision = policy.stepDct(snapshot);

    for (const CoreDecision& cd : decision.cores) {
      if (cd.core >= cores) continue;
      governed[cd.core] = cd.target_khz == 0;
      if (cd.target_khz > 0) core_khz[cd.core] = std::clamp(cd.target_khz, fmin, fmax);
    }
    for (uint32_t c = 0; c < cores; ++c)
      if (governed[c] && tick) core_khz[c] = governor.targetKhz(governor_controls, snapshot.cores[c].util);
    for (const AppDecision& ad : decision.apps) {
      if (ad.id != kAppId) continue;
      if (ad.threads > 0) d = std::clamp<uint32_t>(ad.threads, 1, c_max);
      for (const ThreadDecision& td : ad.thread_decisions)
        if (td.tid >= 1 && static_cast<uint32_t>(td.tid) <= c_max && td.core >= 0 &&
            static_cast<uint32_t>(td.core) < cores)
          thread_core[td.tid - 1] = td.core;
    }

    if (dct) {
      double span = now - interval_time_start;
      double power = span > 0 ? (scoped - interval_app_energy_start) / span : 0.0;
      if (options_.budget_w > 0 && now > options_.warmup_s) {
        ++result.dct_intervals;
        if (power > options_.budget_w * 1.05) ++over;
      }
      if (options_.on_interval) {
        IntervalSample sample{now, power, span > 0 ? (node_energy - interval_node_energy_start) / span : 0.0, d};
        uint32_t n = 0;
        for (uint32_t t = 0; t < d; ++t, ++n) sample.mean_mhz += core_khz[thread_core[t]] / 1000.0;
        if (n) sample.mean_mhz /= n;
        for (uint32_t c = 0; c < cores; ++c) sample.max_temp_c = std::max(sample.max_temp_c, model.coreTemperatureC(c));
        options_.on_interval(sample);
      }
      interval_app_energy_start = scoped;
      interval_node_energy_start = node_energy;
      interval_time_start = now;
    }
  };

  std::vector<ThreadTime> times(c_max);
  std::vector<uint32_t> sharing(cores, 0);
  std::vector<double> activity(cores, 0.0), busy(cores, 0.0), temps(cores, 0.0), volts(cores, 0.0);
  decide(false);
  while (!cursor.done() && now < options_.max_time_s) {
    const WorkloadPhase& ph = cursor.phase();
    // Threads sharing a core get a slice of it each.
    std::fill(sharing.begin(), sharing.end(), 0);
    for (uint32_t t = 0; t < d; ++t) ++sharing[thread_core[t]];
    auto clockOf = [&](uint32_t t) {
      uint32_t c = static_cast<uint32_t>(thread_core[t]);
      return static_cast<double>(core_khz[c]) / static_cast<double>(fmax) / sharing[c];
    };
    const double m = std::clamp(ph.memory_boundness, 0.0, 1.0);
    const double io = std::clamp(ph.io_fraction, 0.0, 1.0 - m);
    const double cs = 1.0 - m - io;
    const double p = std::clamp(ph.parallel_fraction, 0.0, 1.0);
    const double dd = d;
    const double s_eff = ph.bandwidth_threads ? std::min<double>(dd, ph.bandwidth_threads) : dd;
    double slowest = 1e300;
    for (uint32_t t = 0; t < d; ++t) slowest = std::min(slowest, clockOf(t));
    const double lead = clockOf(0);
    const double serial = (1.0 - p) * (cs / lead + m + io);
    const double parallel = p * (cs / slowest / dd + m / s_eff + io / dd);
    const double wall_per_work = serial + parallel;
    for (uint32_t t = 0; t < d; ++t) {
      ThreadTime& tt = times[t];
      double compute = p * cs / clockOf(t) / dd, stall = p * m / s_eff, blocked = p * io / dd;
      tt = {compute, stall, parallel - compute - stall - blocked, blocked};
      if (t == 0) {
        tt.compute += (1.0 - p) * cs / lead;
        tt.stall += (1.0 - p) * m;
        tt.blocked += (1.0 - p) * io;
      } else {
        tt.spin += serial;
      }
    }

    std::fill(activity.begin(), activity.end(), 0.0);
    std::fill(busy.begin(), busy.end(), 0.0);
    std::fill(app_core.begin(), app_core.end(), 0);
    for (uint32_t t = 0; t < d; ++t) {
      const ThreadTime& tt = times[t];
      uint32_t c = static_cast<uint32_t>(thread_core[t]);
      double share = 1.0 / (wall_per_work * sharing[c]);
      activity[c] += (tt.compute + kStallActivity * tt.stall + kSpinActivity * tt.spin) * share;
      busy[c] += tt.busy() * share;
      app_core[c] = 1;
    }
    for (uint32_t c = 0; c < cores; ++c) {
      model.setFrequencyKhz(c, core_khz[c]);
      model.setUtilisation(c, std::max(profile_.idle_utilisation, activity[c]));
    }
    double step = std::min(dt, left * wall_per_work);
    if (step <= 0) step = std::min(dt, 1e-9);
    model.step(step);
    now += step;
    left -= step / wall_per_work;
    result.work_done_core_s += step / wall_per_work;

    double power = 0.0;
    for (uint32_t pk = 0; pk < profile_.packages; ++pk) power += model.packagePowerW(pk);
    double app_power = 0.0, mhz = 0.0;
    uint32_t active = 0;
    for (uint32_t c = 0; c < cores; ++c) {
      core_busy_s[c] += std::max(profile_.idle_utilisation, std::min(1.0, busy[c])) * step;
      temps[c] = model.coreTemperatureC(c);
      volts[c] = model.voltageAt(core_khz[c]);
      if (app_core[c]) {
        app_power += model.corePowerW(c);
        mhz += core_khz[c] / 1000.0;
        ++active;
      }
    }
    app_energy += app_power * step;
    if (now > options_.window_from_s) {
      result.window_s += step;
      result.window_work_core_s += step / wall_per_work;
      result.window_app_energy_j +=
          options_.budget_scope == BudgetScope::kNode ? power * step : app_power * step;
    }
    if (options_.on_step) options_.on_step(now, step, power);
    for (uint32_t t = 0; t < d; ++t) {
      double share = step / (wall_per_work * sharing[thread_core[t]]);
      thread_cycles[t] += static_cast<double>(core_khz[thread_core[t]]) * 1000.0 * times[t].busy() * share;
      thread_stall_s[t] += times[t].stall * share;
      thread_busy_s[t] += times[t].busy() * share;
    }
    reliability.add(temps, volts, step);

    double mean = 0.0;
    for (double temp : temps) {
      mean += temp;
      result.peak_temp_c = std::max(result.peak_temp_c, temp);
    }
    mean /= cores;
    double var = 0.0;
    for (double temp : temps) var += (temp - mean) * (temp - mean);
    temp_sum += mean * step;
    std_sum += std::sqrt(var / cores) * step;
    d_sum += d * step;
    mhz_sum += (active ? mhz / active : 0.0) * step;

    if (left <= 1e-12) {
      cursor.next();
      if (!cursor.done()) left = cursor.phase().work_core_s;
    }

    if (now + 1e-12 < next_dvfs) continue;
    next_dvfs += dvfs_s;
    decide(true);
  }

  result.finished = cursor.done();
  result.time_s = now;
  result.energy_j = packageEnergy();
  result.app_energy_j = scopedEnergy();
  result.mttf_years = reliability.mttfYears();
  if (now > 0) {
    result.avg_temp_c = temp_sum / now;
    result.temp_std_c = std_sum / now;
    result.mean_threads = d_sum / now;
    result.mean_active_mhz = mhz_sum / now;
  }
  result.over_budget_frac = result.dct_intervals ? static_cast<double>(over) / result.dct_intervals : 0.0;
  return result;
}

}  // namespace nk::sim
