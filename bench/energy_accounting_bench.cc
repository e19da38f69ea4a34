// What the energy accounting (joules per app) adds to an energy manager
// step, with 1, 10 and 100 apps of 4 threads each.
//
//   energy_accounting_bench
//
// The step without it is the work the daemon does on every dT_DVFS tick
// for those apps: each thread's /proc/<pid>/task/<tid>/schedstat (this
// process's own parked threads, read for real), the per-thread activity,
// the power split, and the thermal-aware policy's stepDvfs on a 12-core
// node. The accounting is what EnergyManager::attributeEnergy adds: the
// per-package CPU time of each app, EnergyAttribution::account on two
// packages' counters, and charging every app in the registry. The figure:
// the accounting adds under a few % to a step.

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "apps/app_load_accounting.h"
#include "apps/app_registry.h"
#include "apps/energy_attribution.h"
#include "energy/policy_registry.h"
#include "platform/thread_schedstat.h"

using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t kCores = 12;
constexpr uint32_t kCoresPerPackage = 6;
constexpr uint32_t kThreadsPerApp = 4;

// Every pid is alive and every thread its own: the registry's checks pass.
class AnyProcess : public nk::ProcessInspector {
 public:
  std::optional<uint64_t> startTime(pid_t) const override { return 100; }
  bool hasThread(pid_t, pid_t) const override { return true; }
};

// Threads parked on a condition variable: real tids with real schedstat.
class ParkedThreads {
 public:
  explicit ParkedThreads(size_t count) {
    for (size_t i = 0; i < count; ++i)
      threads_.emplace_back([this] {
        {
          std::lock_guard lock(mutex_);
          tids_.push_back(static_cast<pid_t>(syscall(SYS_gettid)));
        }
        ready_.notify_all();
        std::unique_lock lock(mutex_);
        stop_cv_.wait(lock, [this] { return stop_; });
      });
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return tids_.size() == count; });
  }
  ~ParkedThreads() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    stop_cv_.notify_all();
    for (auto& thread : threads_) thread.join();
  }
  std::vector<pid_t> tids() const {
    std::lock_guard lock(mutex_);
    return tids_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_, stop_cv_;
  bool stop_ = false;
  std::vector<pid_t> tids_;
  std::vector<std::thread> threads_;
};

// Medians: on a shared host a preempted step says nothing of the code.
double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

struct Timing {
  double step_us = 0;
  double accounting_us = 0;
};

Timing measure(uint32_t app_count, uint32_t steps) {
  ParkedThreads parked(app_count * kThreadsPerApp);
  const std::vector<pid_t> tids = parked.tids();
  const pid_t pid = getpid();
  nk::ThreadSchedstat schedstat;
  nk::AppLoadAccounting load;
  auto policy = nk::makePolicy("thermal-aware");
  if (!policy) {
    std::fprintf(stderr, "energy_accounting_bench: %s\n", policy.error().message.c_str());
    std::exit(1);
  }
  nk::AccessPolicy access(std::nullopt, {});
  nk::AppRegistry registry(access, std::make_unique<AnyProcess>(), {});
  std::vector<uint64_t> app_ids;
  for (uint32_t a = 0; a < app_count; ++a) {
    nk::PeerCredentials caller;
    caller.pid = 100000 + static_cast<pid_t>(a);
    auto app = registry.registerApp(caller, nk::AppRegistration{"bench", 20000, kThreadsPerApp, "", false});
    app_ids.push_back(app ? app->id : 0);
  }
  nk::EnergyAttribution attribution;
  uint64_t raw_uj[2] = {1'000'000, 2'000'000};

  std::vector<double> step_us, accounting_us;
  for (uint32_t step = 0; step < steps; ++step) {
    // The step as it is.
    auto begin = Clock::now();
    const double now_s = step * 0.05;
    nk::EnergySnapshot snapshot;
    snapshot.time_s = now_s;
    snapshot.workload_unit = nk::WorkloadUnit::kCpuSeconds;
    for (uint32_t c = 0; c < kCores; ++c)
      snapshot.cores.push_back({c, 2000000, 1200000, 2600000, 1200000, 2600000, 55.0, 0.5});
    snapshot.freq_table_khz = {1200000, 1600000, 2000000, 2600000};
    snapshot.package_power_w = {40.0, 35.0};
    std::vector<std::vector<double>> core_cpu_s(app_count, std::vector<double>(kCores, 0.0));
    std::vector<double> busy(app_count, 0.0);
    for (uint32_t a = 0; a < app_count; ++a) {
      nk::AppSample sample;
      sample.id = std::to_string(app_ids[a]);
      sample.budget_w = 20.0;
      sample.max_threads = kThreadsPerApp;
      sample.threads = kThreadsPerApp;
      for (uint32_t t = 0; t < kThreadsPerApp; ++t) {
        pid_t tid = tids[a * kThreadsPerApp + t];
        auto times = schedstat.read(pid, tid);
        nk::ThreadSample ts;
        ts.tid = tid;
        ts.core = static_cast<int32_t>((a * kThreadsPerApp + t) % kCores);
        // Parked threads do not run: feed the activity a made-up advance so
        // the accounting has CPU time to split.
        nk::ThreadReading reading{tid, (times ? times->run_ns : 0) + step * 10'000'000ULL, 0, std::nullopt};
        if (auto activity = load.observe(reading, now_s)) {
          ts.workload = activity->cpu_s;
          busy[a] += activity->busy;
          core_cpu_s[a][ts.core] += activity->cpu_s;
        }
        sample.thread_samples.push_back(ts);
      }
      snapshot.apps.push_back(std::move(sample));
    }
    auto power = nk::AppLoadAccounting::apportionPower(75.0, busy);
    for (uint32_t a = 0; a < app_count; ++a) snapshot.apps[a].power_w = power[a];
    (void)(*policy)->stepDvfs(snapshot);
    auto middle = Clock::now();

    // The accounting.
    raw_uj[0] += 2'000'000;
    raw_uj[1] += 1'750'000;
    std::vector<nk::PackageCounter> counters = {{0, raw_uj[0], 262143328850ULL}, {1, raw_uj[1], 262143328850ULL}};
    std::vector<nk::AppPackageUse> uses;
    for (uint32_t a = 0; a < app_count; ++a)
      for (uint32_t c = 0; c < kCores; ++c)
        if (core_cpu_s[a][c] > 0) uses.push_back({app_ids[a], c / kCoresPerPackage, core_cpu_s[a][c]});
    std::map<uint32_t, double> other = {{0, 0.01}, {1, 0.02}};
    nk::EnergySplit split = attribution.account(step, counters, uses, other);
    for (const auto& [id, joules] : split.app_j) registry.chargeEnergy(id, joules, "");
    registry.setEnergyTotals({0, attribution.packagesJ(), attribution.unattributedJ()});
    auto end = Clock::now();

    if (step >= steps / 10) {  // after a warm-up
      step_us.push_back(std::chrono::duration<double, std::micro>(middle - begin).count());
      accounting_us.push_back(std::chrono::duration<double, std::micro>(end - middle).count());
    }
  }
  return {median(step_us), median(accounting_us)};
}

}  // namespace

int main() {
  std::printf("energy accounting per energy manager step (%u threads per app, %u cores, 2 packages)\n",
              kThreadsPerApp, kCores);
  std::printf("%6s  %14s  %16s  %8s   (medians)\n", "apps", "step (us)", "accounting (us)", "ratio");
  for (uint32_t apps : {1u, 10u, 100u}) {
    uint32_t steps = apps >= 100 ? 400 : 4000;
    Timing t = measure(apps, steps);
    std::printf("%6u  %14.2f  %16.2f  %7.2f%%\n", apps, t.step_us, t.accounting_us,
                100.0 * t.accounting_us / t.step_us);
  }
  return 0;
}
