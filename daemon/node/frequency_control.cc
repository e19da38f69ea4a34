#include "frequency_control.h"

#include <algorithm>
#include <map>

#include "base/units.h"
#include "saved_controls.h"

namespace nk {

namespace {

std::string describeTable(const std::vector<uint64_t>& table) {
  if (table.empty()) return "";
  if (table.size() > 2) {
    uint64_t step = table[1] - table[0];
    bool uniform = true;
    for (size_t i = 1; i < table.size(); ++i) uniform = uniform && table[i] - table[i - 1] == step;
    if (uniform)
      return formatFrequencyKhz(table.front()) + " to " + formatFrequencyKhz(table.back()) + " in " +
             std::to_string(step / 1000) + " MHz steps";
  }
  std::string out;
  for (uint64_t khz : table) out += (out.empty() ? "" : ", ") + formatFrequencyKhz(khz);
  return out;
}

Status checkInRange(const CpuFreqPolicy& policy, uint64_t khz, std::string_view what) {
  if (khz < policy.cpuinfo_min_khz || khz > policy.cpuinfo_max_khz)
    return invalidArgument(std::string(what) + " " + formatFrequencyKhz(khz) + " is outside the hardware range " +
                           formatFrequencyKhz(policy.cpuinfo_min_khz) + " to " +
                           formatFrequencyKhz(policy.cpuinfo_max_khz) + " of policy" + std::to_string(policy.id));
  if (!policy.available_khz.empty() &&
      std::find(policy.available_khz.begin(), policy.available_khz.end(), khz) == policy.available_khz.end())
    return invalidArgument(std::string(what) + " " + formatFrequencyKhz(khz) + " (" + std::to_string(khz) +
                           " kHz) is not an available frequency of policy" + std::to_string(policy.id) +
                           " (available: " + describeTable(policy.available_khz) + ")");
  return {};
}

bool hasGovernor(const CpuFreqPolicy& policy, std::string_view governor) {
  return std::find(policy.available_governors.begin(), policy.available_governors.end(), governor) !=
         policy.available_governors.end();
}

}  // namespace

FrequencyControl::FrequencyControl(CpuFreq& cpufreq, SavedControls& saved) : cpufreq_(cpufreq), saved_(saved) {}

std::string FrequencyControl::controlKey(uint32_t policy, std::string_view file) {
  return SavedControls::makeKey("cpufreq", policy, file);
}

Result<std::vector<CpuFreqPolicy>> FrequencyControl::policies() {
  auto ids = cpufreq_.policyIds();
  if (!ids) return ids.error();
  std::vector<CpuFreqPolicy> out;
  for (uint32_t id : *ids) {
    auto policy = cpufreq_.readPolicy(id);
    if (!policy) return policy.error();
    out.push_back(std::move(*policy));
  }
  return out;
}

Result<std::vector<CpuFreqPolicy>> FrequencyControl::policiesFor(const std::vector<uint32_t>& cpus) {
  auto all = policies();
  if (!all) return all.error();
  if (all->empty()) return unavailable("this node exposes no cpufreq policies");
  if (cpus.empty()) return all;
  std::vector<CpuFreqPolicy> chosen;
  std::vector<uint32_t> known;
  for (uint32_t cpu : cpus) {
    const CpuFreqPolicy* owner = nullptr;
    for (const auto& policy : *all) {
      if (std::find(policy.affected_cpus.begin(), policy.affected_cpus.end(), cpu) != policy.affected_cpus.end())
        owner = &policy;
    }
    if (!owner) {
      for (const auto& policy : *all) known.insert(known.end(), policy.affected_cpus.begin(), policy.affected_cpus.end());
      return notFound("CPU " + std::to_string(cpu) + " does not exist (this node has CPUs " + formatCpuList(known) + ")");
    }
    bool already = std::any_of(chosen.begin(), chosen.end(), [&](const CpuFreqPolicy& p) { return p.id == owner->id; });
    if (!already) chosen.push_back(*owner);
  }
  return chosen;
}

std::string FrequencyControl::currentValue(const CpuFreqPolicy& policy, std::string_view file) {
  if (file == "scaling_min_freq") return std::to_string(policy.min_khz);
  if (file == "scaling_max_freq") return std::to_string(policy.max_khz);
  if (file == "scaling_governor") return policy.governor;
  if (file == "scaling_setspeed")
    return policy.setspeed_khz ? std::to_string(*policy.setspeed_khz) : std::string("<unsupported>");
  return {};
}

Status FrequencyControl::writeOne(const Write& write) {
  if (write.file == "scaling_governor") return cpufreq_.setGovernor(write.policy, write.value);
  auto khz = parseFrequencyKhz(write.value);
  if (!khz) return khz.error();
  if (write.file == "scaling_min_freq") return cpufreq_.setMinKhz(write.policy, *khz);
  if (write.file == "scaling_max_freq") return cpufreq_.setMaxKhz(write.policy, *khz);
  if (write.file == "scaling_setspeed") return cpufreq_.setSpeedKhz(write.policy, *khz);
  return internalError("unknown cpufreq control " + write.file);
}

Status FrequencyControl::apply(const std::vector<Write>& writes, const std::vector<CpuFreqPolicy>& before) {
  auto policyBefore = [&](uint32_t id) -> const CpuFreqPolicy& {
    return *std::find_if(before.begin(), before.end(), [&](const CpuFreqPolicy& p) { return p.id == id; });
  };
  for (const auto& write : writes) {
    Status saved = saved_.remember(controlKey(write.policy, write.file), currentValue(policyBefore(write.policy), write.file));
    if (!saved) return Error{saved.error().code, "cannot save the original value before writing: " + saved.error().message};
  }
  std::vector<Write> done;
  for (const auto& write : writes) {
    Status status = writeOne(write);
    if (!status) {
      // Undo in reverse order so dependent writes (governor, then speed) unwind.
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        std::string previous = currentValue(policyBefore(it->policy), it->file);
        if (it->file == "scaling_setspeed" && previous == "<unsupported>") continue;
        (void)writeOne({it->policy, it->file, previous});
      }
      return status;
    }
    done.push_back(write);
  }
  return {};
}

Result<std::string> FrequencyControl::setLimits(const FrequencyRequest& request) {
  if (!request.min_khz && !request.max_khz && !request.speed_khz)
    return invalidArgument("nothing to set: give a minimum, a maximum or a speed");
  auto chosen = policiesFor(request.cpus);
  if (!chosen) return chosen.error();

  std::vector<Write> writes;
  std::vector<uint32_t> touched_cpus;
  for (const auto& policy : *chosen) {
    std::string where = "policy" + std::to_string(policy.id);
    std::optional<uint64_t> new_min = request.min_khz;
    std::optional<uint64_t> new_max = request.max_khz;
    if (new_min) {
      if (Status s = checkInRange(policy, *new_min, "minimum"); !s) return s.error();
    }
    if (new_max) {
      if (Status s = checkInRange(policy, *new_max, "maximum"); !s) return s.error();
    }
    bool via_limits = false;
    if (request.speed_khz) {
      if (Status s = checkInRange(policy, *request.speed_khz, "speed"); !s) return s.error();
      if (policy.intel_pstate_active || !hasGovernor(policy, "userspace")) {
        // No userspace governor (intel_pstate active mode): pin the speed by
        // making it both the minimum and the maximum.
        if (new_min || new_max)
          return invalidArgument(where + " has no userspace governor, so a speed is set as min = max; "
                                 "do not give --min or --max with --speed here");
        new_min = request.speed_khz;
        new_max = request.speed_khz;
        via_limits = true;
      }
    }
    uint64_t effective_min = new_min.value_or(policy.min_khz);
    uint64_t effective_max = new_max.value_or(policy.max_khz);
    if (effective_min > effective_max)
      return invalidArgument("minimum " + formatFrequencyKhz(effective_min) + " would exceed maximum " +
                             formatFrequencyKhz(effective_max) + " on " + where);
    if (request.speed_khz && !via_limits &&
        (*request.speed_khz < effective_min || *request.speed_khz > effective_max))
      return invalidArgument("speed " + formatFrequencyKhz(*request.speed_khz) + " is outside the limits " +
                             formatFrequencyKhz(effective_min) + " to " + formatFrequencyKhz(effective_max) +
                             " of " + where);
    // Raising the minimum above the old maximum needs the maximum first.
    bool max_first = new_min && *new_min > policy.max_khz;
    auto pushMin = [&] { if (new_min && *new_min != policy.min_khz) writes.push_back({policy.id, "scaling_min_freq", std::to_string(*new_min)}); };
    auto pushMax = [&] { if (new_max && *new_max != policy.max_khz) writes.push_back({policy.id, "scaling_max_freq", std::to_string(*new_max)}); };
    if (max_first) { pushMax(); pushMin(); } else { pushMin(); pushMax(); }
    if (request.speed_khz && !via_limits) {
      if (policy.governor != "userspace") writes.push_back({policy.id, "scaling_governor", "userspace"});
      writes.push_back({policy.id, "scaling_setspeed", std::to_string(*request.speed_khz)});
    }
    touched_cpus.insert(touched_cpus.end(), policy.affected_cpus.begin(), policy.affected_cpus.end());
  }
  if (Status s = apply(writes, *chosen); !s) return s.error();

  std::string summary;
  if (request.min_khz) summary += "min " + formatFrequencyKhz(*request.min_khz);
  if (request.max_khz) summary += std::string(summary.empty() ? "" : ", ") + "max " + formatFrequencyKhz(*request.max_khz);
  if (request.speed_khz) summary += std::string(summary.empty() ? "" : ", ") + "speed " + formatFrequencyKhz(*request.speed_khz);
  return "set " + summary + " on CPUs " + formatCpuList(touched_cpus) + " (" + std::to_string(chosen->size()) +
         " policies, " + std::to_string(writes.size()) + " writes)";
}

Result<std::string> FrequencyControl::setGovernor(const std::vector<uint32_t>& cpus, std::string_view governor) {
  if (governor.empty()) return invalidArgument("no governor given");
  auto chosen = policiesFor(cpus);
  if (!chosen) return chosen.error();
  std::vector<Write> writes;
  std::vector<uint32_t> touched_cpus;
  for (const auto& policy : *chosen) {
    if (!hasGovernor(policy, governor)) {
      std::string available;
      for (const auto& g : policy.available_governors) available += (available.empty() ? "" : ", ") + g;
      return invalidArgument("governor '" + std::string(governor) + "' is not available on policy" +
                             std::to_string(policy.id) + " (available: " + available + ")");
    }
    if (policy.governor != governor) writes.push_back({policy.id, "scaling_governor", std::string(governor)});
    touched_cpus.insert(touched_cpus.end(), policy.affected_cpus.begin(), policy.affected_cpus.end());
  }
  if (Status s = apply(writes, *chosen); !s) return s.error();
  return "governor " + std::string(governor) + " on CPUs " + formatCpuList(touched_cpus) + " (" +
         std::to_string(writes.size()) + " policies changed)";
}

Status FrequencyControl::restore(const std::vector<SavedControls::Entry>& originals) {
  // Group by policy so that governor, limits and speed go back in an order
  // the kernel accepts: governor first, then min/max in whichever order keeps
  // min <= max, and a setspeed only if the original governor was userspace.
  std::map<uint32_t, std::map<std::string, std::string>> by_policy;
  for (const auto& [key, value] : originals) {
    auto control = SavedControls::splitKey(key);
    if (control && control->domain == "cpufreq") by_policy[control->id][control->file] = value;
  }
  Status first_error;
  auto note = [&](Status s) { if (!s && first_error.ok()) first_error = s; };
  for (auto& policy_files : by_policy) {
    // Named, not structured bindings: clang 14 (the sanitizer build) cannot
    // capture those in the lambda below.
    const uint32_t policy_id = policy_files.first;
    auto& files = policy_files.second;
    if (files.count("scaling_governor")) note(cpufreq_.setGovernor(policy_id, files["scaling_governor"]));
    auto current = cpufreq_.readPolicy(policy_id);
    bool max_first = false;
    if (current && files.count("scaling_min_freq")) {
      auto orig_min = parseFrequencyKhz(files["scaling_min_freq"]);
      max_first = orig_min && *orig_min > current->max_khz;
    }
    auto restoreFile = [&](const char* file) {
      if (files.count(file)) note(writeOne({policy_id, file, files[file]}));
    };
    if (max_first) { restoreFile("scaling_max_freq"); restoreFile("scaling_min_freq"); }
    else { restoreFile("scaling_min_freq"); restoreFile("scaling_max_freq"); }
    if (files.count("scaling_setspeed") && files["scaling_setspeed"] != "<unsupported>") restoreFile("scaling_setspeed");
  }
  return first_error;
}

}  // namespace nk
