#include "node_controller.h"

#include <algorithm>

namespace nk {

namespace {
const std::vector<std::string> kGovernorPolicies = {"performance", "powersave", "ondemand"};
// Policies that only the energy manager implements, for the cores of the
// apps it drives; cores without apps keep whatever governor they have.
const std::vector<std::string> kManagerOnlyPolicies = {"thermal-aware", "efficiency"};
}

Result<std::unique_ptr<NodeController>> NodeController::create(Parts parts) {
  if (!parts.cpufreq || !parts.meter || !parts.thermal) return internalError("node controller needs all platform parts");
  auto saved = SavedControls::open(parts.saved_controls_file);
  if (!saved) return saved.error();
  auto controller = std::make_unique<NodeController>(PrivateTag{}, std::move(parts), std::move(*saved));
  controller->sampler_->start();
  return controller;
}

bool NodeController::hasSavedControls() const {
  std::lock_guard lock(control_mutex_);
  return !saved_.entries().empty();
}

NodeController::NodeController(PrivateTag, Parts parts, SavedControls saved)
    : parts_(std::move(parts)),
      saved_(std::move(saved)),
      frequency_(*parts_.cpufreq, saved_),
      power_caps_(*parts_.meter, saved_),
      sampler_(std::make_unique<TelemetrySampler>(parts_.topology, *parts_.cpufreq, *parts_.meter, *parts_.thermal,
                                                  std::move(parts_.host_load), parts_.telemetry_interval)) {}

NodeController::~NodeController() {
  if (sampler_) sampler_->stop();
}

Result<std::vector<CpuFreqPolicy>> NodeController::frequencyPolicies() {
  std::lock_guard lock(control_mutex_);
  return frequency_.policies();
}

Result<std::string> NodeController::setFrequencyLimits(const FrequencyRequest& request) {
  std::lock_guard lock(control_mutex_);
  auto result = frequency_.setLimits(request);
  sampler_->invalidatePolicies();
  return result;
}

Result<std::string> NodeController::setGovernor(const std::vector<uint32_t>& cpus, std::string_view governor) {
  std::lock_guard lock(control_mutex_);
  auto result = frequency_.setGovernor(cpus, governor);
  sampler_->invalidatePolicies();
  return result;
}

Result<std::vector<RaplZone>> NodeController::powerCaps() {
  std::lock_guard lock(control_mutex_);
  return power_caps_.zones();
}

Result<std::string> NodeController::setPowerCap(const std::vector<uint32_t>& packages, double watts) {
  std::lock_guard lock(control_mutex_);
  auto result = power_caps_.setCap(packages, watts);
  sampler_->invalidatePolicies();
  return result;
}

Result<std::string> NodeController::disablePowerCap(const std::vector<uint32_t>& packages) {
  std::lock_guard lock(control_mutex_);
  auto result = power_caps_.disable(packages);
  sampler_->invalidatePolicies();
  return result;
}

std::string NodeController::policy() const {
  std::lock_guard lock(control_mutex_);
  return policy_;
}

std::vector<std::string> NodeController::availablePolicies() const {
  std::vector<std::string> all = kGovernorPolicies;
  all.insert(all.end(), kManagerOnlyPolicies.begin(), kManagerOnlyPolicies.end());
  return all;
}

Result<std::string> NodeController::setPolicy(std::string_view name) {
  if (std::find(kManagerOnlyPolicies.begin(), kManagerOnlyPolicies.end(), name) != kManagerOnlyPolicies.end()) {
    std::lock_guard lock(control_mutex_);
    policy_ = std::string(name);
    return "policy " + policy_ + ": the energy manager drives the cores of managed apps; other cores keep their governor";
  }
  if (std::find(kGovernorPolicies.begin(), kGovernorPolicies.end(), name) == kGovernorPolicies.end()) {
    std::string list;
    for (const auto& p : availablePolicies()) list += (list.empty() ? "" : ", ") + p;
    return notFound("unknown policy '" + std::string(name) + "' (available: " + list + ")");
  }
  std::lock_guard lock(control_mutex_);
  auto policies = frequency_.policies();
  if (!policies) return policies.error();
  std::string governor(name);
  if (name == "ondemand" && !policies->empty()) {
    const auto& available = policies->front().available_governors;
    // intel_pstate's dynamic governor is called powersave.
    if (std::find(available.begin(), available.end(), "ondemand") == available.end()) governor = "powersave";
  }
  auto result = frequency_.setGovernor({}, governor);
  sampler_->invalidatePolicies();
  if (!result) return result.error();
  policy_ = std::string(name);
  return "policy " + policy_ + ": " + *result;
}

Result<size_t> NodeController::restoreSavedControls() {
  std::lock_guard lock(control_mutex_);
  const auto& entries = saved_.entries();
  size_t count = entries.size();
  Status freq = frequency_.restore(entries);
  Status caps = power_caps_.restore(entries);
  sampler_->invalidatePolicies();
  if (!freq) return freq.error();
  if (!caps) return caps.error();
  if (Status cleared = saved_.clear(); !cleared) return cleared.error();
  policy_ = "default";
  return count;
}

}  // namespace nk
