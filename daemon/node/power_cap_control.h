#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "saved_controls.h"
#include "platform/power_meter.h"

namespace nk {

// Validated, saved and restorable writes to the RAPL package power caps.
class PowerCapControl {
 public:
  PowerCapControl(PowerMeter& meter, SavedControls& saved);

  Result<std::vector<RaplZone>> zones();
  // packages empty: all. Sets the limit and enables the cap.
  Result<std::string> setCap(const std::vector<uint32_t>& packages, double watts);
  Result<std::string> disable(const std::vector<uint32_t>& packages);
  Status restore(const std::vector<SavedControls::Entry>& originals);

  static std::string controlKey(uint32_t zone, std::string_view file);

 private:
  Result<std::vector<RaplZone>> zonesFor(const std::vector<uint32_t>& packages);
  Status saveOriginals(const RaplZone& zone);

  PowerMeter& meter_;
  SavedControls& saved_;
};

}  // namespace nk
