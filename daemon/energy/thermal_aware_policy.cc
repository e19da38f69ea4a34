#include "energy/thermal_aware_policy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "energy/fair_share.h"
#include "energy/frequency_table.h"
#include "energy/node_cap_guard.h"

namespace nk {

namespace {

// The package power nobody accounts for is a noisy difference of two
// readings; never let it take more than this much of the cap from the apps.
constexpr double kMinAppFractionOfCap = 0.1;

double finiteOr(double v, double fallback) { return std::isfinite(v) ? v : fallback; }

}  // namespace

ThermalAwarePolicy::ThermalAwarePolicy(const PolicyConfig& config) : config_(config) {
  if (!(config_.dct_interval_s > 0.0) || !std::isfinite(config_.dct_interval_s))
    config_.dct_interval_s = 0.5;
  if (config_.dvfs_per_dct == 0)
    config_.dvfs_per_dct = 10;
  const ThermalAwareTunables& t = config_.thermal;
  ilc_params_.k1 = t.k1;
  ilc_params_.k2 = t.k2;
  ilc_params_.delta_f_khz = t.delta_f_khz;
  ilc_params_.error_band_pct = t.error_band_pct;
  ilc_params_.error_window = t.error_window;
  ilc_params_.over_budget_gain = t.over_budget_gain;
}

// Eq. 3 wants one sample per dT_DVFS; the daemon calls stepDct right after
// the stepDvfs of the same tick, so a repeated timestamp is not sampled twice.
void ThermalAwarePolicy::sampleTemperatures(const EnergySnapshot& snapshot) {
  if (sampled_once_ && snapshot.time_s == last_sample_time_)
    return;
  sampled_once_ = true;
  last_sample_time_ = snapshot.time_s;
  for (const CoreReading& core : snapshot.cores) {
    CoreState* state = coreFor(core.id);
    if (!state) {
      cores_.push_back({core.id, {}, 0.0});
      state = &cores_.back();
    }
    state->temps.add(core.temp_c);
  }
}

ThermalAwarePolicy::CoreState* ThermalAwarePolicy::coreFor(uint32_t id) {
  for (CoreState& c : cores_)
    if (c.id == id)
      return &c;
  return nullptr;
}

const CoreReading* ThermalAwarePolicy::coreSample(const EnergySnapshot& snapshot, int32_t id) const {
  if (id < 0)
    return nullptr;
  for (const CoreReading& c : snapshot.cores)
    if (c.id == static_cast<uint32_t>(id))
      return &c;
  return nullptr;
}

ThermalAwarePolicy::AppState& ThermalAwarePolicy::appFor(const AppSample& app, const EnergySnapshot& snapshot) {
  for (AppState& a : apps_)
    if (a.id == app.id)
      return a;
  AppState state;
  state.id = app.id;
  // The app's own D only seeds ours; from then on D is this policy's state.
  state.threads = app.threads ? app.threads : static_cast<uint32_t>(app.thread_samples.size());
  state.threads = std::clamp<uint32_t>(state.threads, 1, upperBound(app, state, snapshot));
  apps_.push_back(std::move(state));
  return apps_.back();
}

ThermalAwarePolicy::ThreadState& ThermalAwarePolicy::threadFor(AppState& app, int32_t tid) {
  for (ThreadState& t : app.thread_states)
    if (t.tid == tid)
      return t;
  const ThermalAwareTunables& tun = config_.thermal;
  ThreadState state{tid, -1, WorkloadPredictor(tun.omega, tun.window, tun.normalise_ewma),
                    IlcController(ilc_params_)};
  app.thread_states.push_back(std::move(state));
  return app.thread_states.back();
}

// C of Algorithm 1: the app's own maximum, but no more than the cores it has.
uint32_t ThermalAwarePolicy::upperBound(const AppSample& app, const AppState& state,
                                        const EnergySnapshot& snapshot) const {
  uint32_t node = static_cast<uint32_t>(snapshot.cores.size());
  uint32_t c = app.max_threads ? app.max_threads : node;
  if (!state.cores.empty())
    c = std::min<uint32_t>(c, static_cast<uint32_t>(state.cores.size()));
  else if (node > 0)
    c = std::min(c, node);
  return std::max<uint32_t>(c, 1);
}

// The node cap always wins: each app's budget is clamped to it, and when
// the apps together want more than the cap allows, it is split max-min
// fairly. An app without a budget under a cap asks for the whole cap.
void ThermalAwarePolicy::computeBudgets(const EnergySnapshot& snapshot) {
  size_t n = snapshot.apps.size();
  demand_w_.assign(n, 0.0);
  share_w_.assign(n, 0.0);
  double cap = finiteOr(snapshot.power_cap_w, 0.0);
  if (!(cap > 0.0)) {
    for (size_t i = 0; i < n; ++i) {
      double b = finiteOr(snapshot.apps[i].budget_w, 0.0);
      share_w_[i] = b > 0.0 ? b : 0.0;
    }
    return;
  }
  double apps_power = 0.0;
  for (const AppSample& app : snapshot.apps)
    apps_power += std::max(0.0, finiteOr(app.power_w, 0.0));
  double node_power = NodeCapGuard::nodePowerW(snapshot);
  double unattributed = std::max(0.0, node_power - apps_power);
  double capacity = std::max(cap - unattributed, kMinAppFractionOfCap * cap);
  for (size_t i = 0; i < n; ++i) {
    double b = finiteOr(snapshot.apps[i].budget_w, 0.0);
    demand_w_[i] = b > 0.0 ? std::min(b, capacity) : capacity;
  }
  FairShare::divide(capacity, demand_w_, share_w_);
}

// Apps get disjoint, max-min fair sets of cores in the node's core order;
// the affinity swap then works inside each app's set.
void ThermalAwarePolicy::partitionCores(const EnergySnapshot& snapshot) {
  size_t n = snapshot.apps.size();
  uint32_t node = static_cast<uint32_t>(snapshot.cores.size());
  demand_cores_.assign(n, 0);
  share_cores_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = snapshot.apps[i].max_threads ? snapshot.apps[i].max_threads : node;
    demand_cores_[i] = std::min(c, node);
  }
  FairShare::divide(node, demand_cores_, share_cores_);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    AppState& app = appFor(snapshot.apps[i], snapshot);
    app.cores.clear();
    for (uint32_t k = 0; k < share_cores_[i] && next < snapshot.cores.size(); ++k)
      app.cores.push_back(snapshot.cores[next++].id);
  }
}

// Every thread gets one core of the app's set, keeping the one it has when
// that is free; only when there are more threads than cores do they share.
void ThermalAwarePolicy::placeThreads(AppState& app, const AppSample& sample) {
  size_t n = app.cores.size();
  if (n == 0) {
    for (ThreadState& t : app.thread_states)
      t.core = -1;
    return;
  }
  used_.assign(n, 0);
  auto indexOf = [&](int32_t core) -> int64_t {
    for (size_t i = 0; i < n; ++i)
      if (static_cast<int32_t>(app.cores[i]) == core)
        return static_cast<int64_t>(i);
    return -1;
  };
  // First pass: keep what is valid, in the snapshot's thread order.
  for (const ThreadSample& ts : sample.thread_samples) {
    ThreadState& t = threadFor(app, ts.tid);
    int64_t keep = indexOf(t.core);
    if (keep < 0 || used_[keep])
      keep = indexOf(ts.core);
    if (keep >= 0 && !used_[keep]) {
      used_[keep] = 1;
      t.core = static_cast<int32_t>(app.cores[keep]);
    } else {
      t.core = -2;  // to be placed
    }
  }
  size_t rr = 0;
  for (const ThreadSample& ts : sample.thread_samples) {
    ThreadState& t = threadFor(app, ts.tid);
    if (t.core != -2)
      continue;
    int64_t free = -1;
    for (size_t i = 0; i < n; ++i)
      if (!used_[i]) {
        free = static_cast<int64_t>(i);
        break;
      }
    if (free >= 0) {
      used_[free] = 1;
      t.core = static_cast<int32_t>(app.cores[free]);
    } else {
      t.core = static_cast<int32_t>(app.cores[rr++ % n]);
    }
  }
}

// Algorithm 1, lines 7-12: sort the app's cores by ascending std(Temp_c)
// (eq. 3) and swap the threads of the c-th and (C-c)-th cores, i.e. the
// first with the last, the second with the second last. Ties keep core
// order, so the swap is deterministic. Returns the number of pairs swapped.
uint32_t ThermalAwarePolicy::swapAffinity(AppState& app) {
  size_t n = app.cores.size();
  if (n < 2)
    return 0;
  if (config_.thermal.swap_to_coolest_k > 0.0)
    return moveToCoolest(app);
  order_.assign(app.cores.begin(), app.cores.end());
  auto stdOf = [&](uint32_t id) {
    CoreState* c = coreFor(id);
    return c ? c->temps.stdDev() : 0.0;
  };
  std::stable_sort(order_.begin(), order_.end(),
                   [&](uint32_t a, uint32_t b) { return stdOf(a) < stdOf(b); });
  uint32_t pairs = 0;
  for (size_t i = 0; i < n / 2; ++i) {
    int32_t a = static_cast<int32_t>(order_[i]);
    int32_t b = static_cast<int32_t>(order_[n - 1 - i]);
    for (ThreadState& t : app.thread_states) {
      if (!t.present)
        continue;
      if (t.core == a)
        t.core = b;
      else if (t.core == b)
        t.core = a;
    }
    ++pairs;
  }
  return pairs;
}

// Busy cores sorted hottest first, idle ones coolest first; the i-th
// hottest busy core hands its thread to the i-th coolest idle core while the
// first is warmer by more than swap_to_coolest_k. Cores run as long hot or
// cool, which Shafik et al.'s std-dev order does not see.
uint32_t ThermalAwarePolicy::moveToCoolest(AppState& app) {
  auto meanOf = [&](uint32_t id) {
    CoreState* c = coreFor(id);
    return c && c->temps.samples() ? c->temps.mean() : 0.0;
  };
  std::vector<uint32_t>& busy = order_;
  busy.clear();
  std::vector<uint32_t> idle;
  for (uint32_t core : app.cores) {
    bool used = std::any_of(app.thread_states.begin(), app.thread_states.end(),
                            [&](const ThreadState& t) { return t.present && t.core == static_cast<int32_t>(core); });
    (used ? busy : idle).push_back(core);
  }
  std::stable_sort(busy.begin(), busy.end(), [&](uint32_t a, uint32_t b) { return meanOf(a) > meanOf(b); });
  std::stable_sort(idle.begin(), idle.end(), [&](uint32_t a, uint32_t b) { return meanOf(a) < meanOf(b); });
  uint32_t moves = 0;
  for (size_t i = 0; i < busy.size() && i < idle.size(); ++i) {
    if (meanOf(busy[i]) - meanOf(idle[i]) <= config_.thermal.swap_to_coolest_k)
      break;
    for (ThreadState& t : app.thread_states)
      if (t.present && t.core == static_cast<int32_t>(busy[i]))
        t.core = static_cast<int32_t>(idle[i]);
    ++moves;
  }
  return moves;
}

// Eq. 4 for threads that have not been profiled yet: P_d'budget = P_budget / D.
// Eq. 5 for the D' profiled ones:
//   P_dbudget = W_d * (P_budget - sum_d' P_d'budget) / sum_{d=1}^{D'} W_d,
// with W_d the interval average of eq. 1. A thread counts as profiled when
// it did work in the interval; an OpenMP pool keeps idle threads after D
// drops, and those are the ones that join again when D rises, so they are
// "new" in Shafik et al.'s sense. D' <= D keeps the busiest.
// Shares are stored as fractions of the app budget so that a budget change
// between DCT steps applies at once.
void ThermalAwarePolicy::allocateBudgets(AppState& app) {
  uint32_t d = std::max<uint32_t>(app.threads, 1);
  auto average = [&](uint32_t i) {
    const ThreadState& t = app.thread_states[i];
    return t.workload_samples ? t.workload_sum / t.workload_samples : 0.0;  // eq. 1
  };
  order_.clear();
  for (size_t i = 0; i < app.thread_states.size(); ++i) {
    ThreadState& t = app.thread_states[i];
    t.share = 0.0;
    t.has_share = true;
    if (t.present && average(static_cast<uint32_t>(i)) > 0.0)
      order_.push_back(static_cast<uint32_t>(i));
  }
  std::stable_sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) { return average(a) > average(b); });
  if (order_.size() > d)
    order_.resize(d);
  uint32_t profiled = static_cast<uint32_t>(order_.size());
  uint32_t fresh = d - profiled;
  double new_share = 1.0 / d;                        // eq. 4
  double rest = 1.0 - fresh * new_share;             // P_budget - sum_d' P_d'budget
  double total_w = 0.0;
  for (uint32_t i : order_)
    total_w += average(i);
  double f_sum = 0.0;
  uint32_t f_count = 0;
  for (uint32_t i : order_) {
    ThreadState& t = app.thread_states[i];
    t.share = total_w > 0.0 ? rest * average(i) / total_w : rest / profiled;  // eq. 5
    if (t.ilc.started()) {
      f_sum += t.ilc.frequencyKhz();
      ++f_count;
    }
  }
  uint32_t given = 0;
  for (size_t i = 0; i < app.thread_states.size() && given < fresh; ++i) {
    ThreadState& t = app.thread_states[i];
    if (!t.present || std::find(order_.begin(), order_.end(), static_cast<uint32_t>(i)) != order_.end())
      continue;
    t.share = new_share;
    ++given;
    // A joining thread starts where the app's other threads are, not at
    // whatever its idle core was left at.
    if (f_count > 0)
      t.ilc.start(f_sum / f_count);
  }
}

void ThermalAwarePolicy::dropAbsent() {
  std::erase_if(apps_, [](const AppState& a) { return !a.present; });
  for (AppState& app : apps_)
    std::erase_if(app.thread_states, [](const ThreadState& t) { return !t.present; });
}

// Delta-f of eq. 7/8 "can be obtained from the OS": the driver's table step,
// fixed at the first snapshot so that every controller uses the same one.
void ThermalAwarePolicy::resolveDeltaF(const EnergySnapshot& snapshot) {
  if (ilc_params_.delta_f_khz <= 0.0 || !std::isfinite(ilc_params_.delta_f_khz))
    ilc_params_.delta_f_khz = FrequencyTable(snapshot.freq_table_khz).smallestStepKhz();
}

EnergyDecision ThermalAwarePolicy::stepDvfs(const EnergySnapshot& snapshot) {
  resolveDeltaF(snapshot);
  sampleTemperatures(snapshot);
  computeBudgets(snapshot);
  FrequencyTable table(snapshot.freq_table_khz);
  double dt = config_.dvfsIntervalS();

  for (AppState& a : apps_)
    a.present = false;
  for (size_t i = 0; i < snapshot.apps.size(); ++i) {
    const AppSample& sample = snapshot.apps[i];
    AppState& app = appFor(sample, snapshot);
    app.present = true;
    app.budget_w = share_w_[i];
    double power = std::max(0.0, finiteOr(sample.power_w, 0.0));
    app.power_sum += power;
    ++app.power_samples;

    for (ThreadState& t : app.thread_states)
      t.present = false;
    // Workload in cycles: CPU time at the core's current clock otherwise.
    auto cyclesOf = [&](const ThreadSample& ts) {
      double w = std::max(0.0, finiteOr(ts.workload, 0.0));
      if (snapshot.workload_unit == WorkloadUnit::kCpuSeconds) {
        const CoreReading* c = coreSample(snapshot, ts.core);
        w *= c ? static_cast<double>(c->cur_khz) * 1000.0 : 0.0;
      }
      return w;
    };
    double total_w = 0.0;
    for (const ThreadSample& ts : sample.thread_samples)
      total_w += cyclesOf(ts);
    size_t count = sample.thread_samples.size();
    // Eq. 4/5 shares are set at the DCT step for the threads expected to
    // work; between DCT steps the app may lag behind D or a pool thread may
    // join. The app's budget holds either way: a busy thread without a share
    // gets the eq. 4 one, and the shares of the threads that are busy now
    // are scaled to add up to the whole budget.
    double busy_share = 0.0;
    for (const ThreadSample& ts : sample.thread_samples) {
      ThreadState& t = threadFor(app, ts.tid);
      bool busy = total_w <= 0.0 || cyclesOf(ts) > 0.0;
      if (busy && (!t.has_share || t.share <= 0.0)) {
        t.share = 1.0 / std::max<uint32_t>(app.threads, 1);  // eq. 4 for a thread that just joined
        t.has_share = true;
      }
      if (busy)
        busy_share += t.share;
    }
    for (const ThreadSample& ts : sample.thread_samples) {
      ThreadState& t = threadFor(app, ts.tid);
      t.present = true;
      double w = cyclesOf(ts);
      const CoreReading* on = coreSample(snapshot, ts.core);
      // Eq. 2's P_dt: only the app's sum is measured; a thread's part is
      // taken in proportion to the cycles it ran.
      double p_d = total_w > 0.0 ? power * w / total_w : power / static_cast<double>(count);
      t.predictor.observe(w);               // W_{t-1} for eq. 6
      t.workload_sum += w;                  // eq. 1
      ++t.workload_samples;
      bool busy = total_w <= 0.0 || w > 0.0;
      if (t.core < 0 && on)
        t.core = ts.core;
      const CoreReading* core = coreSample(snapshot, t.core);
      if (!core)
        core = on;
      if (!core || !(app.budget_w > 0.0) || !busy || t.share <= 0.0 || busy_share <= 0.0)
        continue;
      CoreLimits limits = table.limitsOf(*core);
      if (!t.ilc.started()) {
        // A thread that just appeared starts at the app's operating point.
        double f_sum = 0.0;
        uint32_t f_count = 0;
        for (const ThreadState& o : app.thread_states)
          if (o.ilc.started() && o.share > 0.0) {
            f_sum += o.ilc.frequencyKhz();
            ++f_count;
          }
        t.ilc.start(f_count ? f_sum / f_count
                            : static_cast<double>(core->cur_khz ? core->cur_khz : limits.max_khz));
      }
      t.ilc.step(p_d, t.share / busy_share * app.budget_w, t.predictor.predict(), dt,
                 static_cast<double>(limits.min_khz), static_cast<double>(limits.max_khz));
    }
  }
  std::erase_if(apps_, [](const AppState& a) { return !a.present; });

  EnergyDecision decision;
  buildDecision(snapshot, decision);
  char buf[128];
  int len = std::snprintf(buf, sizeof buf, "thermal-aware DVFS:");
  for (size_t i = 0; i < apps_.size() && i < 4 && len < static_cast<int>(sizeof buf); ++i) {
    double err = 0.0;
    for (const ThreadState& t : apps_[i].thread_states)
      if (t.present && t.share > 0.0) {
        err = t.ilc.lastErrorPct();
        break;
      }
    len += std::snprintf(buf + len, sizeof buf - len, " %s E=%+.1f%%", apps_[i].id.c_str(), err);
  }
  decision.reason = buf;
  return decision;
}

// The mean clock eq. 8 holds for the app's budgeted threads, and the lowest
// clock any of their cores allows; false when no thread is controlled yet.
bool ThermalAwarePolicy::clockAndFloor(const AppState& app, const EnergySnapshot& snapshot, double& clock_khz,
                                       double& floor_khz) const {
  FrequencyTable table(snapshot.freq_table_khz);
  double sum = 0.0;
  uint32_t n = 0;
  floor_khz = 0.0;
  for (const ThreadState& t : app.thread_states) {
    if (!t.present || !t.ilc.started() || t.share <= 0.0)
      continue;
    const CoreReading* core = coreSample(snapshot, t.core);
    if (!core)
      continue;
    sum += t.ilc.frequencyKhz();
    ++n;
    floor_khz = std::max(floor_khz, static_cast<double>(table.limitsOf(*core).min_khz));
  }
  if (n == 0)
    return false;
  clock_khz = sum / n;
  return true;
}

EnergyDecision ThermalAwarePolicy::stepDct(const EnergySnapshot& snapshot) {
  resolveDeltaF(snapshot);
  sampleTemperatures(snapshot);
  computeBudgets(snapshot);
  for (AppState& a : apps_)
    a.present = false;
  partitionCores(snapshot);

  std::string reason = "thermal-aware DCT:";
  for (size_t i = 0; i < snapshot.apps.size(); ++i) {
    const AppSample& sample = snapshot.apps[i];
    AppState& app = appFor(sample, snapshot);
    app.present = true;
    app.budget_w = share_w_[i];
    for (ThreadState& t : app.thread_states)
      t.present = false;
    for (const ThreadSample& ts : sample.thread_samples)
      threadFor(app, ts.tid).present = true;

    // Algorithm 1, line 1: P = sum_d P_d, the interval average (eq. 2).
    double p = app.power_samples ? app.power_sum / app.power_samples
                                 : std::max(0.0, finiteOr(sample.power_w, 0.0));
    uint32_t upper = upperBound(sample, app, snapshot);
    uint32_t lower = std::min<uint32_t>(2, upper);
    uint32_t before = app.threads;
    uint32_t d = std::clamp(app.threads, lower, upper);  // a D > C from outside is clamped first
    // Not in Shafik et al.: D grows only while P is clearly below the budget:
    // by dct_band_pct, and by half a thread's share of P (P / 2D; a share of
    // P overstates a thread, P holds the node's idle power too). As printed,
    // D moves at every interval, and with the power lagging behind it swings
    // by several threads around the budget.
    double band_pct = config_.thermal.dct_band_pct;
    if (band_pct > 0.0 && d > 0)
      band_pct = std::max(band_pct, 50.0 / d);
    double grow_below = app.budget_w * (1.0 - std::max(0.0, band_pct) / 100.0);
    bool width_first = config_.thermal.dct_width_first && app.budget_w > 0.0;
    double clock_khz = 0.0, floor_khz = 0.0;
    if (width_first)
      width_first = clockAndFloor(app, snapshot, clock_khz, floor_khz);
    // Room: after the feed-forward every clock is still a table step above
    // the floor, so eq. 8 can take back what the new thread overshoots.
    const double step_khz = ilc_params_.delta_f_khz;
    bool at_floor = !width_first || clock_khz <= floor_khz + step_khz;
    // What a thread draws at the bottom clock, learnt whenever the clocks
    // are there: one more thread must fit even if eq. 8 has to take every
    // clock down to the floor to make room for it.
    if (width_first && at_floor && d > 0)
      app.floor_w_per_thread = p / d;
    bool fits = app.floor_w_per_thread <= 0.0 || app.floor_w_per_thread * (d + 1) <= app.budget_w;
    bool room = width_first && fits && p <= app.budget_w && clock_khz * d / (d + 1.0) >= floor_khz + step_khz;
    const double over_at = app.budget_w * (width_first ? 1.02 : 1.0);
    if (!(app.budget_w > 0.0) || p < grow_below || room) {
      if (d + 1 <= upper)
        ++d;  // lines 2-3: D = D + 1, D <= C
    } else if (p > over_at && at_floor) {
      // Lines 4-5: D = D - 1, D >= 2. Not in the paper: far over the budget
      // (a cut, or a start at D = C) D drops by the excess share of its
      // threads, rounded up, at once instead of one thread per interval.
      uint32_t cut = 1;
      if (config_.thermal.dct_proportional_cut && p > 0.0)
        cut = std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(d * (p - app.budget_w) / p)));
      d = d > lower + cut ? d - cut : lower;
    }
    app.threads = d;
    // Only when D grows: a thread that leaves takes its power with it, and
    // raising the others' clocks by D_old / D_new would raise the app's
    // power (P grows faster than f, V rising with it) just when it was
    // over budget.
    if (config_.thermal.dct_feed_forward && d > before && before > 0) {
      double scale = static_cast<double>(before) / d;
      for (ThreadState& t : app.thread_states)
        if (t.ilc.started())
          t.ilc.start(t.ilc.frequencyKhz() * scale);  // clamped by the next step
    }

    placeThreads(app, sample);
    uint32_t pairs = swapAffinity(app);
    allocateBudgets(app);

    app.power_sum = 0.0;
    app.power_samples = 0;
    for (ThreadState& t : app.thread_states) {
      t.workload_sum = 0.0;
      t.workload_samples = 0;
      t.ilc.resetError();  // eq. 10 counts from the last budget allocation
    }
    if (i < 4) {
      char buf[112];
      std::snprintf(buf, sizeof buf, " %s P=%.1fW B=%.1fW D %u->%u, %u swaps;", app.id.c_str(), p,
                    app.budget_w, before, d, pairs);
      reason += buf;
    }
  }
  dropAbsent();
  for (CoreState& c : cores_)
    c.temps.reset();

  EnergyDecision decision;
  buildDecision(snapshot, decision);
  if (!reason.empty() && reason.back() == ';')
    reason.pop_back();
  decision.reason = std::move(reason);
  return decision;
}

// A core hosting threads of several controlled budgets gets the lowest
// frequency any of them asks for: the budgets, and the cap, win over speed.
// Frequencies are rounded down to the table for the same reason.
void ThermalAwarePolicy::buildDecision(const EnergySnapshot& snapshot, EnergyDecision& decision) {
  FrequencyTable table(snapshot.freq_table_khz);
  for (CoreState& c : cores_)
    c.request_khz = 0.0;
  decision.apps.reserve(snapshot.apps.size());
  for (const AppSample& sample : snapshot.apps) {
    AppState* app = nullptr;
    for (AppState& a : apps_)
      if (a.id == sample.id)
        app = &a;
    if (!app)
      continue;
    AppDecision ad;
    ad.id = app->id;
    ad.threads = app->threads;
    ad.budget_w = app->budget_w;
    ad.thread_decisions.reserve(sample.thread_samples.size());
    for (const ThreadSample& ts : sample.thread_samples) {
      const ThreadState* t = nullptr;
      for (const ThreadState& s : app->thread_states)
        if (s.tid == ts.tid)
          t = &s;
      if (!t)
        continue;
      ad.thread_decisions.push_back({t->tid, t->core, t->share * app->budget_w});
      if (!(app->budget_w > 0.0) || t->share <= 0.0 || !t->ilc.started())
        continue;
      int32_t core = t->core >= 0 ? t->core : ts.core;
      CoreState* cs = core >= 0 ? coreFor(static_cast<uint32_t>(core)) : nullptr;
      if (!cs)
        continue;
      double f = t->ilc.frequencyKhz();
      cs->request_khz = cs->request_khz > 0.0 ? std::min(cs->request_khz, f) : f;
    }
    decision.apps.push_back(std::move(ad));
  }
  decision.cores.reserve(snapshot.cores.size());
  for (const CoreReading& core : snapshot.cores) {
    CoreState* cs = coreFor(core.id);
    if (!cs || cs->request_khz <= 0.0) {
      decision.cores.push_back({core.id, 0, Governor::kUnchanged});
      continue;
    }
    uint64_t khz = table.resolve(cs->request_khz, table.limitsOf(core), FrequencyRelation::kHighestAtOrBelow);
    decision.cores.push_back({core.id, khz, Governor::kUserspace});
  }
}

}  // namespace nk
