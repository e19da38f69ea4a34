// The cost of one control step of each energy policy, on the node the
// daemon is sized for: 12 cores, 4 apps with pools of 3 to 6 threads.
//
//   energy_step_bench
//
// A small closed-loop simulator feeds every policy the same scripted run:
// core temperatures drift and heat with frequency, each app goes through
// phases of different intensity, its power crosses its budget so that DCT
// moves D, and a node power cap comes and goes. The frequencies, D and
// affinities a policy decides flow back into the next snapshot, as on a
// node. Building the snapshot is not timed; stepDvfs and stepDct are, one
// call at a time. The goal is 50 us for the work of one dT_DVFS tick; a
// tick that ends a dT_DCT interval runs both steps, so its sum is compared
// with the goal too.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "energy/policy_registry.h"

using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t kCores = 12;
constexpr uint32_t kPoolSizes[] = {3, 4, 5, 6};
// One app has no budget, so the unbudgeted path under a cap is measured too.
constexpr double kBudgetsW[] = {7.0, 9.0, 11.0, 0.0};
constexpr uint64_t kMinKhz = 1200000;
constexpr uint64_t kMaxKhz = 2600000;
constexpr uint32_t kWarmupTicks = 2000;
constexpr uint32_t kTicks = 400000;
constexpr double kGoalUs = 50.0;
constexpr uint32_t kSeed = 20240611;

struct SimThread {
  int32_t tid = 0;
  int32_t core = 0;
};

struct SimApp {
  std::string id;
  uint32_t pool = 0;
  uint32_t d = 0;          // the team size the app runs with now
  double budget_w = 0.0;
  double phase_s = 0.0;    // offsets the app's intensity phases from the others'
  std::vector<SimThread> threads;
};

// The node as the policies see it, advanced one dT_DVFS at a time. Its
// physics is crude on purpose: all it must do is keep every branch of the
// policies busy the way a real node would.
class NodeScript {
 public:
  explicit NodeScript(double dvfs_interval_s) : dt_s_(dvfs_interval_s), random_(kSeed) {
    cur_khz_.assign(kCores, kMaxKhz);
    for (uint64_t f = kMinKhz; f <= kMaxKhz; f += 100000)
      snapshot_.freq_table_khz.push_back(f);
    snapshot_.cores.resize(kCores);
    for (uint32_t c = 0; c < kCores; ++c) {
      nk::CoreReading& core = snapshot_.cores[c];
      core.id = c;
      core.min_khz = core.cpuinfo_min_khz = kMinKhz;
      core.max_khz = core.cpuinfo_max_khz = kMaxKhz;
    }
    snapshot_.package_power_w.assign(1, 0.0);
    uint32_t next_core = 0;
    for (size_t i = 0; i < std::size(kPoolSizes); ++i) {
      SimApp app;
      app.id = "app-" + std::to_string(i);
      app.pool = kPoolSizes[i];
      app.d = kPoolSizes[i];
      app.budget_w = kBudgetsW[i];
      app.phase_s = 1.7 * static_cast<double>(i);
      for (uint32_t k = 0; k < app.pool; ++k)
        app.threads.push_back({static_cast<int32_t>(10000 * (i + 1) + k), static_cast<int32_t>(next_core++ % kCores)});
      apps_.push_back(std::move(app));
    }
  }

  const nk::EnergySnapshot& next(uint64_t tick) {
    double t = static_cast<double>(tick) * dt_s_;
    snapshot_.time_s = t;
    // The admin caps the node for 30 s of every minute.
    snapshot_.power_cap_w = std::fmod(t, 60.0) < 30.0 ? 0.0 : 55.0;
    std::vector<double> core_busy(kCores, 0.0);
    double node_w = 8.0;  // uncore and idle cores
    snapshot_.apps.resize(apps_.size());
    for (size_t i = 0; i < apps_.size(); ++i) {
      const SimApp& app = apps_[i];
      nk::AppSample& sample = snapshot_.apps[i];
      sample.id = app.id;
      sample.budget_w = app.budget_w;
      sample.max_threads = app.pool;
      sample.threads = app.d;
      sample.thread_samples.resize(app.pool);
      double intensity = intensityOf(app, t);
      double app_w = 0.0;
      for (uint32_t k = 0; k < app.pool; ++k) {
        const SimThread& thread = app.threads[k];
        nk::ThreadSample& ts = sample.thread_samples[k];
        ts.tid = thread.tid;
        ts.core = thread.core;
        // Threads beyond D stay in the pool, idle, as OpenMP keeps them.
        double busy = k < app.d ? std::clamp(intensity * (0.85 + 0.3 * uniform()), 0.0, 1.0) : 0.0;
        double ghz = static_cast<double>(cur_khz_[thread.core]) / 1e6;
        ts.workload = busy * ghz * 1e9 * dt_s_;
        app_w += busy * (0.6 + 0.55 * ghz * ghz);
        core_busy[thread.core] += busy;
      }
      sample.power_w = app_w;
      node_w += app_w;
    }
    snapshot_.package_power_w[0] = node_w;
    for (uint32_t c = 0; c < kCores; ++c) {
      nk::CoreReading& core = snapshot_.cores[c];
      core.cur_khz = cur_khz_[c];
      core.util = std::min(1.0, core_busy[c] + 0.02 * uniform());
      double heat = 12.0 * core.util * static_cast<double>(cur_khz_[c]) / static_cast<double>(kMaxKhz);
      core.temp_c = 42.0 + 0.7 * c + 6.0 * std::sin(t / 25.0 + 0.5 * c) + heat + 0.4 * (uniform() - 0.5);
    }
    return snapshot_;
  }

  // What the daemon would write: frequencies, D at the next region, pins.
  void apply(const nk::EnergyDecision& decision) {
    for (const nk::CoreDecision& core : decision.cores)
      if (core.core < kCores && core.target_khz != 0)
        cur_khz_[core.core] = std::clamp(core.target_khz, kMinKhz, kMaxKhz);
    for (const nk::AppDecision& ad : decision.apps)
      for (SimApp& app : apps_) {
        if (app.id != ad.id)
          continue;
        if (ad.threads != 0 && std::min(ad.threads, app.pool) != app.d) {
          app.d = std::min(ad.threads, app.pool);
          ++d_changes_;
        }
        for (const nk::ThreadDecision& td : ad.thread_decisions)
          for (SimThread& thread : app.threads)
            if (thread.tid == td.tid && td.core >= 0 && static_cast<uint32_t>(td.core) < kCores)
              thread.core = td.core;
      }
  }

  uint64_t dChanges() const { return d_changes_; }

 private:
  // Phases of a few seconds: compute-bound, memory-bound, nearly idle.
  static double intensityOf(const SimApp& app, double t) {
    double phase = std::fmod(t + app.phase_s, 9.0);
    if (phase < 4.0)
      return 0.95;
    if (phase < 7.0)
      return 0.6;
    return 0.15;
  }

  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(random_); }

  double dt_s_;
  std::mt19937 random_;
  nk::EnergySnapshot snapshot_;
  std::vector<SimApp> apps_;
  std::vector<uint64_t> cur_khz_;
  uint64_t d_changes_ = 0;
};

struct Percentiles {
  double p50_us = 0.0;
  double p99_us = 0.0;
};

Percentiles percentilesOf(std::vector<double> us) {
  if (us.empty())
    return {};
  std::sort(us.begin(), us.end());
  size_t p99 = std::min(us.size() - 1, static_cast<size_t>(std::ceil(0.99 * static_cast<double>(us.size()))) - 1);
  return {us[us.size() / 2], us[p99]};
}

struct PolicyRow {
  Percentiles dvfs;
  Percentiles dct;
  Percentiles dct_tick;  // stepDvfs + stepDct of the same tick
  uint64_t d_changes = 0;
  double wall_s = 0.0;
};

double microsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

bool runPolicy(std::string_view name, const nk::PolicyConfig& config, PolicyRow& row) {
  auto made = nk::makePolicy(name, config);
  if (!made) {
    std::fprintf(stderr, "energy_step_bench: %s\n", made.error().message.c_str());
    return false;
  }
  std::unique_ptr<nk::EnergyPolicy> policy = std::move(made.value());
  NodeScript script(config.dvfsIntervalS());
  std::vector<double> dvfs_us, dct_us, dct_tick_us;
  dvfs_us.reserve(kTicks);
  dct_us.reserve(kTicks / config.dvfs_per_dct + 1);
  dct_tick_us.reserve(kTicks / config.dvfs_per_dct + 1);
  auto start = Clock::now();
  for (uint64_t tick = 0; tick < kWarmupTicks + kTicks; ++tick) {
    const nk::EnergySnapshot& snapshot = script.next(tick);
    bool measured = tick >= kWarmupTicks;
    bool dct_due = tick % config.dvfs_per_dct == config.dvfs_per_dct - 1;

    auto t0 = Clock::now();
    nk::EnergyDecision dvfs = policy->stepDvfs(snapshot);
    auto t1 = Clock::now();
    script.apply(dvfs);
    if (measured)
      dvfs_us.push_back(microsBetween(t0, t1));
    if (!dct_due)
      continue;
    auto t2 = Clock::now();
    nk::EnergyDecision dct = policy->stepDct(snapshot);
    auto t3 = Clock::now();
    script.apply(dct);
    if (measured) {
      dct_us.push_back(microsBetween(t2, t3));
      dct_tick_us.push_back(microsBetween(t0, t1) + microsBetween(t2, t3));
    }
  }
  row.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  row.dvfs = percentilesOf(std::move(dvfs_us));
  row.dct = percentilesOf(std::move(dct_us));
  row.dct_tick = percentilesOf(std::move(dct_tick_us));
  row.d_changes = script.dChanges();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fprintf(help ? stdout : stderr, "usage: %s (no arguments)\n", argv[0]);
    return help ? 0 : 2;
  }
  nk::PolicyConfig config;
  std::printf("Energy policy step cost: %u cores, %zu apps of 3-6 threads, %u DVFS steps (%u DCT) per policy\n",
              kCores, std::size(kPoolSizes), kTicks, kTicks / config.dvfs_per_dct);
  std::printf("dT_DVFS = %.0f ms, dT_DCT = %.0f ms; goal %.0f us of policy work per dT_DVFS tick\n",
              config.dvfsIntervalS() * 1e3, config.dct_interval_s * 1e3, kGoalUs);
  std::printf("%-14s %9s %9s %9s %9s %10s %10s %10s %9s\n", "policy", "dvfs p50", "dvfs p99", "dct p50",
              "dct p99", "tick p99", "dvfs/goal", "tick/goal", "D moves");
  std::printf("%-14s %9s %9s %9s %9s %10s %10s %10s %9s\n", "", "(us)", "(us)", "(us)", "(us)", "(us)", "(p99)",
              "(p99)", "");
  int rc = 0;
  for (std::string_view name : {"thermal-aware", "ondemand", "performance", "powersave"}) {
    PolicyRow row;
    if (!runPolicy(name, config, row)) {
      rc = 1;
      continue;
    }
    std::printf("%-14.*s %9.2f %9.2f %9.2f %9.2f %10.2f %10.3f %10.3f %9llu\n", static_cast<int>(name.size()),
                name.data(), row.dvfs.p50_us, row.dvfs.p99_us, row.dct.p50_us, row.dct.p99_us, row.dct_tick.p99_us,
                row.dvfs.p99_us / kGoalUs, row.dct_tick.p99_us / kGoalUs,
                static_cast<unsigned long long>(row.d_changes));
    std::fflush(stdout);
  }
  std::printf("tick = a tick that ends a dT_DCT interval: stepDvfs + stepDct; ratios below 1 meet the goal\n");
  return rc;
}
