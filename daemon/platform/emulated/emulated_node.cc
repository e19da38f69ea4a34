#include "emulated_node.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>

#include "emulated_governor.h"
#include "emulated_sysfs_tree.h"
#include "physics_model.h"
#include "platform/host_cpu_load.h"

namespace nk {

namespace {

// Controls change when the daemon writes them, a few times a second at
// most; reading ~50 files at every 20 ms tick would cost more than all the
// rest of the loop. With inotify only written files are read, and a full
// pass now and then only guards against lost events; without it, controls
// are polled. /proc/stat: shorter windows would only add noise.
constexpr double kPolledControlPeriodS = 0.1;
constexpr double kWatchedControlRefreshS = 1.0;
constexpr double kLoadPeriodS = 0.1;
// RAPL's counters move about every millisecond, so energy read over any
// window is the power times the window. Moved only at each 50 ms update,
// a sampler window the host had stretched or shrunk held one update or
// three instead of two: 15 of 120 `status` readings of an idle 18.7 W
// package read 9.3 or 28.2 W (in the plot too, and in what the energy
// manager steered by). Moved every 10 ms, none was off by more than 11%,
// for 0.4% more of a core. Between updates the model steps and only the
// counters go out; the rest waits for the update.
constexpr double kEnergyIntervalS = 0.01;
// A tick that comes this late (the host was suspended, the thread starved)
// restarts the schedule instead of running a burst of catch-up ticks.
constexpr double kMaxLagS = 1.0;
// The cap is lifted again only this far below the limit, so that it does
// not flap between two table steps on every tick.
constexpr double kCapReleaseFraction = 0.97;
// Margin under TjMax at which a thermally capped package may speed up again.
constexpr double kThermalReleaseC = 2.0;

}  // namespace

EmulatedNode::EmulatedNode(NodeProfile profile, Options options)
    : profile_(std::move(profile)), options_(std::move(options)) {}

Result<std::unique_ptr<EmulatedNode>> EmulatedNode::start(NodeProfile profile, Options options) {
  if (Status valid = profile.validate(); !valid) return valid.error();
  if (!(options.update_interval_s >= 1e-3 && options.update_interval_s <= 10))
    return invalidArgument("emulated node: update interval must be between 1 ms and 10 s");
  if (options.state_dir.empty()) return invalidArgument("emulated node: no state directory");

  std::unique_ptr<EmulatedNode> node(new EmulatedNode(std::move(profile), std::move(options)));
  const NodeProfile& p = node->profile_;
  auto tree = EmulatedSysfsTree::open(node->options_.state_dir / "sysfs", p);
  if (!tree) return tree.error();
  node->tree_ = std::make_unique<EmulatedSysfsTree>(std::move(*tree));
  node->model_ = std::make_unique<PhysicsModel>(p);
  node->governor_ = std::make_unique<EmulatedGovernor>(p);

  // The first sample only sets the baseline; it also tells how many host
  // CPUs there are to map emulated cores onto.
  node->host_load_ = std::make_unique<HostCpuLoad>("/");
  if (auto first = node->host_load_->sample(); first && !first->empty()) {
    node->host_cpus_ = static_cast<uint32_t>(first->size());
    node->host_utilisation_.assign(first->size(), 0.0);
  } else {
    node->host_cpus_ = std::max(1u, std::thread::hardware_concurrency());
  }

  const uint32_t cores = p.cores();
  node->extra_utilisation_.assign(cores, 0.0);
  node->controls_.resize(cores);
  for (uint32_t core = 0; core < cores; ++core)
    node->controls_[core] = node->tree_->readControls(node->tree_->policyOfCore(core));
  node->power_limit_uw_.resize(p.packages);
  node->cap_index_.assign(p.packages, p.frequencies_khz.size() - 1);
  node->energy_offset_uj_.resize(p.packages);
  for (uint32_t package = 0; package < p.packages; ++package) {
    node->power_limit_uw_[package] = node->tree_->readPowerLimitUw(package);
    // A restarted node continues the counter, like RAPL across a daemon restart.
    node->energy_offset_uj_[package] = node->tree_->readEnergyUj(package);
    if (!node->tree_->reused()) continue;
    // Start from the temperatures the tree was left with. The heatsink is not
    // in sysfs; its coolest core is the closest estimate from below.
    double coolest = std::numeric_limits<double>::infinity();
    for (uint32_t core_id = 0; core_id < p.cores_per_package; ++core_id) {
      auto celsius = node->tree_->readCoreTemperature(package, core_id);
      if (!celsius || *celsius < p.ambient_c - 50 || *celsius > p.tjmax_c + 50) continue;
      node->model_->setCoreTemperatureC(package * p.cores_per_package + core_id, *celsius);
      coolest = std::min(coolest, *celsius);
    }
    if (std::isfinite(coolest)) node->model_->setHeatsinkTemperatureC(package, coolest);
  }
  node->utilisation_scratch_.assign(cores, 0.0);
  node->frequency_scratch_.assign(cores, p.frequencies_khz.front());
  node->snapshot_.package_energy_j.assign(p.packages, 0.0);
  node->raw_energy_scratch_.assign(p.packages, 0);
  node->snapshot_.package_power_w.assign(p.packages, 0.0);
  node->snapshot_.core_temperature_c.assign(cores, p.ambient_c);
  node->snapshot_.core_frequency_khz.assign(cores, p.frequencies_khz.front());
  node->snapshot_.core_utilisation.assign(cores, 0.0);

  try {
    node->thread_ = std::thread(&EmulatedNode::run, node.get());
  } catch (const std::exception& error) {
    return internalError(std::string("emulated node: cannot start the physics thread: ") + error.what());
  }
  return node;
}

EmulatedNode::~EmulatedNode() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (model_fd_ >= 0) ::close(model_fd_);
}

std::filesystem::path EmulatedNode::sysfsRoot() const { return options_.state_dir / "sysfs"; }

uint32_t EmulatedNode::hostCpuOf(uint32_t core) const { return core % host_cpus_; }

void EmulatedNode::setExtraUtilisation(uint32_t core, double utilisation) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (core >= extra_utilisation_.size()) return;
  extra_utilisation_[core] = utilisation >= 0 ? std::min(utilisation, 1.0) : 0.0;  // NaN -> 0
}

void EmulatedNode::setHostLoadEnabled(bool enabled) {
  std::lock_guard<std::mutex> lock(mutex_);
  host_load_enabled_ = enabled;
}

double EmulatedNode::powerAtLowestClockW(uint32_t busy_cores) const {
  PhysicsModel model(profile_);  // at the ambient temperature, the lowest clock
  const uint32_t cores = profile_.cores();
  for (uint32_t core = 0; core < cores; ++core)
    model.setUtilisation(core, core < busy_cores ? 1.0 : profile_.idle_utilisation);
  double watts = 0;
  for (uint32_t package = 0; package < profile_.packages; ++package) watts += model.packagePowerW(package);
  return watts;
}

EmulatedNode::ModelSnapshot EmulatedNode::modelSnapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snapshot_;
}

void EmulatedNode::run() {
  pthread_setname_np(pthread_self(), "nk-emulator");
  using Clock = std::chrono::steady_clock;
  const auto energy_every =
      static_cast<uint64_t>(std::max(1.0, std::round(options_.update_interval_s / kEnergyIntervalS)));
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.update_interval_s / static_cast<double>(energy_every)));
  const double control_period = tree_->watchingControls() ? kWatchedControlRefreshS : kPolledControlPeriodS;
  const auto control_every =
      static_cast<uint64_t>(std::max(1.0, std::round(control_period / options_.update_interval_s)));
  const auto load_every = static_cast<uint64_t>(std::max(1.0, std::round(kLoadPeriodS / options_.update_interval_s)));
  auto last = Clock::now();
  auto next = last;
  for (uint64_t tick = 0;; ++tick) {
    next += interval;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stop_cv_.wait_until(lock, next, [this] { return stop_.load(); })) return;
    }
    const auto now = Clock::now();
    if (now - next > std::chrono::duration<double>(kMaxLagS)) next = now;
    const double dt = std::chrono::duration<double>(now - last).count();
    last = now;
    if (tick % energy_every != 0) {
      advanceEnergy(dt);
      continue;
    }
    // Update 0 reads both, so that a control written before start is seen at once.
    const uint64_t update = tick / energy_every;
    iterate(dt, update % control_every == 0, update % load_every == 0);
  }
}

void EmulatedNode::iterate(double dt_s, bool read_all_controls, bool sample_load) {
  const NodeProfile& p = profile_;
  const uint32_t cores = p.cores();
  if (sample_load) {
    if (auto load = host_load_->sample(); load && !load->empty()) host_utilisation_ = std::move(*load);
  }
  if (tree_->watchingControls()) {
    EmulatedControlChanges changes = tree_->takeControlChanges();
    read_all_controls = read_all_controls || changes.everything;
    if (!read_all_controls) {
      for (uint32_t policy : changes.policies) {
        const uint32_t core = policy / p.threads_per_core;
        if (core < cores) controls_[core] = tree_->readControls(policy);
      }
      for (uint32_t package : changes.packages)
        if (package < p.packages) power_limit_uw_[package] = tree_->readPowerLimitUw(package);
    }
  }
  if (read_all_controls) {
    for (uint32_t core = 0; core < cores; ++core) controls_[core] = tree_->readControls(tree_->policyOfCore(core));
    for (uint32_t package = 0; package < p.packages; ++package)
      power_limit_uw_[package] = tree_->readPowerLimitUw(package);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (uint32_t core = 0; core < cores; ++core) {
      double host = host_utilisation_.empty() || !host_load_enabled_ || options_.ignore_host_load
                        ? 0.0
                        : host_utilisation_[core % host_utilisation_.size()];
      utilisation_scratch_[core] = std::max(p.idle_utilisation, std::min(1.0, host + extra_utilisation_[core]));
    }
  }
  for (uint32_t core = 0; core < cores; ++core) {
    const uint32_t package = core / p.cores_per_package;
    uint64_t khz = governor_->targetKhz(controls_[core], utilisation_scratch_[core]);
    // RAPL and PROCHOT act below the OS: the ceiling may go under scaling_min.
    khz = std::min(khz, p.frequencies_khz[cap_index_[package]]);
    frequency_scratch_[core] = khz;
    model_->setFrequencyKhz(core, khz);
    model_->setUtilisation(core, utilisation_scratch_[core]);
  }
  model_->step(dt_s);
  for (uint32_t package = 0; package < p.packages; ++package) updateCap(package);

  for (uint32_t core = 0; core < cores; ++core) {
    tree_->writeCurrentFrequency(tree_->policyOfCore(core), frequency_scratch_[core]);
    tree_->writeCoreTemperature(core / p.cores_per_package, core % p.cores_per_package,
                                model_->coreTemperatureC(core));
  }
  for (uint32_t package = 0; package < p.packages; ++package)
    tree_->writePackageTemperature(package, model_->packageTemperatureC(package));
  std::lock_guard<std::mutex> lock(mutex_);
  writeEnergyLocked();
  ++snapshot_.update_seq;
  for (uint32_t core = 0; core < cores; ++core) {
    snapshot_.core_temperature_c[core] = model_->coreTemperatureC(core);
    snapshot_.core_frequency_khz[core] = frequency_scratch_[core];
    snapshot_.core_utilisation[core] = utilisation_scratch_[core];
  }
}

void EmulatedNode::advanceEnergy(double dt_s) {
  model_->step(dt_s);
  std::lock_guard<std::mutex> lock(mutex_);
  writeEnergyLocked();
}

void EmulatedNode::writeEnergyLocked() {
  const NodeProfile& p = profile_;
  const uint64_t range = p.rapl_max_energy_range_uj;
  for (uint32_t package = 0; package < p.packages; ++package) {
    const double joules = model_->packageEnergyJ(package);
    const uint64_t since_start = static_cast<uint64_t>(std::llround(joules * 1e6)) % range;
    const uint64_t offset = energy_offset_uj_[package];
    // (offset + since_start) mod range without overflowing near UINT64_MAX.
    const uint64_t raw = offset >= range - since_start ? offset - (range - since_start) : offset + since_start;
    tree_->writeEnergy(package, raw);
    raw_energy_scratch_[package] = raw;
    snapshot_.package_energy_j[package] = joules;
    snapshot_.package_power_w[package] = model_->packagePowerW(package);
  }
  ++snapshot_.energy_seq;
  snapshot_.elapsed_s = model_->elapsedS();
  if (!options_.model_file.empty()) writeModelFile();
}

void EmulatedNode::writeModelFile() {
  // Called with mutex_ held. Rewritten in place through a held descriptor,
  // like the sysfs outputs, because a create-and-rename every update cost
  // more than the rest of the update together.
  std::string text = "seq " + std::to_string(snapshot_.energy_seq) + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "elapsed_s %.6f\n", snapshot_.elapsed_s);
  text += line;
  for (size_t package = 0; package < snapshot_.package_energy_j.size(); ++package) {
    std::snprintf(line, sizeof line, "package %zu energy_j %.6f raw_energy_uj %llu power_w %.6f\n", package,
                  snapshot_.package_energy_j[package], static_cast<unsigned long long>(raw_energy_scratch_[package]),
                  snapshot_.package_power_w[package]);
    text += line;
  }
  if (model_fd_ < 0) model_fd_ = ::open(options_.model_file.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (model_fd_ < 0) return;
  if (::pwrite(model_fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()))
    (void)!::ftruncate(model_fd_, static_cast<off_t>(text.size()));
}

void EmulatedNode::updateCap(uint32_t package) {
  size_t& index = cap_index_[package];
  const size_t top = profile_.frequencies_khz.size() - 1;
  const double watts = model_->packagePowerW(package);
  const double hottest = model_->packageTemperatureC(package);
  const std::optional<uint64_t>& limit_uw = power_limit_uw_[package];
  const double limit_w = limit_uw ? static_cast<double>(*limit_uw) / 1e6 : 0;
  const bool over = (limit_uw && watts > limit_w) || hottest >= profile_.tjmax_c;
  const bool clear = (!limit_uw || watts < kCapReleaseFraction * limit_w) && hottest < profile_.tjmax_c - kThermalReleaseC;
  if (over && index > 0) --index;
  else if (clear && index < top) ++index;
}

}  // namespace nk
