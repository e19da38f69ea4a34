#include "telemetry_sampler.h"

#include <pthread.h>

#include <time.h>

#include <algorithm>
#include <cmath>

#include "platform/thread_priority.h"

namespace nk {

namespace {

int64_t clockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Limits and governors rarely change behind our back; re-reading them once a
// second keeps the sampler cheap while still noticing other tools' writes.
// Only the periodic samples count: a re-read is some 300 files on a 12-core
// node, and a fresh sample that did it (one in ten of them did) answered its
// caller several times slower than the others.
constexpr unsigned kPolicyRereadSamples = 10;

void addWarning(std::vector<std::string>& warnings, std::string message) {
  if (std::find(warnings.begin(), warnings.end(), message) == warnings.end()) warnings.push_back(std::move(message));
}

}  // namespace

TelemetrySampler::TelemetrySampler(const NodeTopology& topology, CpuFreq& cpufreq, PowerMeter& meter,
                                   ThermalSensors& thermal, std::unique_ptr<HostCpuLoad> host_load,
                                   std::chrono::milliseconds interval)
    : topology_(topology),
      cpufreq_(cpufreq),
      meter_(meter),
      thermal_(thermal),
      host_load_(std::move(host_load)),
      interval_(interval),
      utilisation_(topology.cores.size(), kUnknown) {
  if (host_load_) (void)host_load_->sample();  // baseline for the first delta
  latest_ = takeSample(true);
}

TelemetrySampler::~TelemetrySampler() { stop(); }

void TelemetrySampler::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(run_mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { run(); });
}

void TelemetrySampler::stop() {
  {
    std::lock_guard lock(run_mutex_);
    stopping_ = true;
  }
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TelemetrySampler::run() {
  pthread_setname_np(pthread_self(), "nk-sampler");
  ThreadPriority::raiseLatencyBound("nk-sampler");
  auto next = std::chrono::steady_clock::now() + interval_;
  std::unique_lock lock(run_mutex_);
  while (!stopping_) {
    if (run_cv_.wait_until(lock, next, [this] { return stopping_; })) break;
    lock.unlock();
    auto sample = takeSample(true);
    {
      std::lock_guard guard(latest_mutex_);
      latest_ = std::move(sample);
    }
    latest_cv_.notify_all();
    lock.lock();
    next += interval_;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval_;  // fell behind (suspend, overload): do not burst
  }
}

std::shared_ptr<const TelemetrySample> TelemetrySampler::latest() const {
  std::lock_guard lock(latest_mutex_);
  return latest_;
}

std::shared_ptr<const TelemetrySample> TelemetrySampler::waitForNewer(uint64_t seq,
                                                                     std::chrono::milliseconds timeout) const {
  std::unique_lock lock(latest_mutex_);
  if (!latest_cv_.wait_for(lock, timeout, [&] { return latest_ && latest_->seq > seq; })) return nullptr;
  return latest_;
}

std::shared_ptr<const TelemetrySample> TelemetrySampler::sampleNow() {
  auto sample = takeSample(false);
  std::lock_guard lock(latest_mutex_);
  if (!latest_ || latest_->seq < sample->seq) latest_ = sample;
  return sample;
}

std::shared_ptr<const TelemetrySample> TelemetrySampler::sampleNoOlderThan(std::chrono::nanoseconds max_age) {
  if (!policies_stale_.load()) {
    std::shared_ptr<const TelemetrySample> last = latest();
    if (last && clockNs(CLOCK_MONOTONIC) - last->monotonic_ns < max_age.count()) return last;
  }
  return sampleNow();
}

void TelemetrySampler::refreshPolicies(std::vector<std::string>& warnings) {
  policy_cache_.clear();
  auto ids = cpufreq_.policyIds();
  if (!ids) {
    addWarning(warnings, ids.error().message);
  } else {
    for (uint32_t id : *ids) {
      auto policy = cpufreq_.readPolicy(id);
      if (policy) policy_cache_.push_back(std::move(*policy));
      else addWarning(warnings, policy.error().message);
    }
  }
  core_policy_.assign(topology_.cores.size(), -1);
  for (size_t core = 0; core < topology_.cores.size(); ++core) {
    if (topology_.cores[core].cpus.empty()) continue;
    uint32_t cpu = topology_.cores[core].cpus.front();
    for (size_t p = 0; p < policy_cache_.size(); ++p) {
      const auto& cpus = policy_cache_[p].affected_cpus;
      if (std::find(cpus.begin(), cpus.end(), cpu) != cpus.end()) core_policy_[core] = static_cast<int>(p);
    }
  }
  auto zones = meter_.readZones();
  if (zones) {
    zone_cache_ = std::move(*zones);
  } else {
    addWarning(warnings, zones.error().message);
  }
  if (counters_.size() != zone_cache_.size()) {
    counters_.clear();
    for (const auto& zone : zone_cache_) counters_.emplace_back(zone.max_energy_range_uj);
    last_power_w_.assign(zone_cache_.size(), kUnknown);
    power_point_j_.assign(zone_cache_.size(), kUnknown);
  }
  samples_since_policy_read_ = 0;
}

std::shared_ptr<const TelemetrySample> TelemetrySampler::takeSample(bool periodic) {
  std::lock_guard lock(sample_mutex_);
  auto sample = std::make_shared<TelemetrySample>();
  sample->seq = ++seq_;
  sample->realtime_ns = clockNs(CLOCK_REALTIME);
  sample->monotonic_ns = clockNs(CLOCK_MONOTONIC);
  auto& warnings = sample->warnings;

  if (policies_stale_.exchange(false) || (periodic && ++samples_since_policy_read_ >= kPolicyRereadSamples) ||
      core_policy_.empty())
    refreshPolicies(warnings);

  if (periodic && host_load_) {
    auto load = host_load_->sample();
    if (load) {
      for (size_t core = 0; core < topology_.cores.size(); ++core) {
        const auto& host_cpus = topology_.cores[core].host_cpus;
        double sum = 0;
        int count = 0;
        for (uint32_t cpu : host_cpus) {
          if (cpu < load->size()) {
            sum += (*load)[cpu];
            ++count;
          }
        }
        utilisation_[core] = count ? sum / count : kUnknown;
      }
    } else {
      addWarning(warnings, load.error().message);
    }
  }

  std::vector<uint64_t> cur_by_policy(policy_cache_.size(), 0);
  for (size_t p = 0; p < policy_cache_.size(); ++p) {
    auto cur = cpufreq_.readCurrentKhz(policy_cache_[p].id);
    if (cur) cur_by_policy[p] = *cur;
    else addWarning(warnings, cur.error().message);
  }

  std::vector<TemperatureReading> temperatures;
  if (auto readings = thermal_.read()) temperatures = std::move(*readings);
  else addWarning(warnings, readings.error().message);

  sample->cores.reserve(topology_.cores.size());
  for (size_t core = 0; core < topology_.cores.size(); ++core) {
    const CoreInfo& info = topology_.cores[core];
    CoreSample out;
    out.id = info.id;
    out.package = info.package;
    if (core_policy_[core] >= 0) {
      const auto& policy = policy_cache_[static_cast<size_t>(core_policy_[core])];
      out.cur_khz = cur_by_policy[static_cast<size_t>(core_policy_[core])];
      out.min_khz = policy.min_khz;
      out.max_khz = policy.max_khz;
      out.governor = policy.governor;
    }
    for (const auto& reading : temperatures) {
      if (reading.kind == TemperatureReading::Kind::kCore && reading.package == info.package &&
          reading.core_id == info.os_core_id)
        out.temperature_c = reading.celsius;
    }
    out.utilisation = utilisation_[core];
    sample->cores.push_back(std::move(out));
  }

  bool power_window_elapsed =
      periodic && (power_point_ns_ == 0 || sample->monotonic_ns - power_point_ns_ >= interval_.count() * 500000);
  double node_power = 0;
  bool node_power_known = !zone_cache_.empty();
  for (size_t z = 0; z < zone_cache_.size(); ++z) {
    const RaplZone& zone = zone_cache_[z];
    PackageSample out;
    out.id = zone.index;
    out.max_energy_range_uj = zone.max_energy_range_uj;
    out.power_limit_w = zone.power_limit_uw ? static_cast<double>(*zone.power_limit_uw) / 1e6 : 0;
    out.power_limit_enabled = zone.enabled;
    auto raw = meter_.readEnergyUj(zone.index);
    if (raw) {
      out.raw_energy_uj = *raw;
      counters_[z].update(*raw, sample->monotonic_ns);
    } else {
      addWarning(warnings, raw.error().message);
    }
    out.energy_j = counters_[z].joules();
    // Power over at least half a sampling interval: fresh reads in between
    // would otherwise turn dE/dt into noise.
    if (power_window_elapsed) {
      if (power_point_ns_ != 0 && !std::isnan(power_point_j_[z])) {
        double dt = static_cast<double>(sample->monotonic_ns - power_point_ns_) / 1e9;
        last_power_w_[z] = (out.energy_j - power_point_j_[z]) / dt;
      }
      power_point_j_[z] = out.energy_j;
    }
    out.power_w = last_power_w_[z];
    for (const auto& reading : temperatures) {
      if (reading.kind == TemperatureReading::Kind::kPackage && reading.package == zone.index)
        out.temperature_c = reading.celsius;
    }
    if (std::isnan(out.power_w)) node_power_known = false;
    else node_power += out.power_w;
    sample->node_energy_j += out.energy_j;
    sample->packages.push_back(out);
  }
  if (power_window_elapsed) power_point_ns_ = sample->monotonic_ns;
  sample->node_power_w = node_power_known ? node_power : kUnknown;
  if (periodic) last_periodic_ns_ = sample->monotonic_ns;
  return sample;
}

}  // namespace nk
