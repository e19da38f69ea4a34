#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "saved_controls.h"
#include "platform/cpu_freq.h"

namespace nk {

struct FrequencyRequest {
  std::vector<uint32_t> cpus;  // empty: all
  std::optional<uint64_t> min_khz;
  std::optional<uint64_t> max_khz;
  std::optional<uint64_t> speed_khz;
};

// Validated writes to cpufreq. A request is checked against every policy it
// touches before anything is written; originals are saved before the first
// write; a write that fails halfway rolls the request back. So a refused
// request changes nothing.
class FrequencyControl {
 public:
  FrequencyControl(CpuFreq& cpufreq, SavedControls& saved);

  Result<std::vector<CpuFreqPolicy>> policies();
  // Returns a human summary of what was done.
  Result<std::string> setLimits(const FrequencyRequest& request);
  Result<std::string> setGovernor(const std::vector<uint32_t>& cpus, std::string_view governor);

  // Writes back the originals recorded under "cpufreq:" keys.
  Status restore(const std::vector<SavedControls::Entry>& originals);

  static std::string controlKey(uint32_t policy, std::string_view file);

 private:
  struct Write {
    uint32_t policy;
    std::string file;  // scaling_min_freq, ...
    std::string value;
  };
  Result<std::vector<CpuFreqPolicy>> policiesFor(const std::vector<uint32_t>& cpus);
  static std::string currentValue(const CpuFreqPolicy& policy, std::string_view file);
  Status writeOne(const Write& write);
  // Saves originals, applies in order, rolls back on failure.
  Status apply(const std::vector<Write>& writes, const std::vector<CpuFreqPolicy>& before);

  CpuFreq& cpufreq_;
  SavedControls& saved_;
};

}  // namespace nk
