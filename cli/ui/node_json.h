#pragma once

#include <nlohmann/json.hpp>

#include "nodekeeper/v1/apps.pb.h"
#include "nodekeeper/v1/node.pb.h"

namespace nk::ui {

// /api/node's events: the telemetry and app fields the page plots, in
// watts and kHz as the page shows them, NaN (no sensor) as null.
class NodeJson {
 public:
  static nlohmann::json telemetry(const nodekeeper::v1::TelemetrySnapshot& snapshot);
  static nlohmann::json apps(const nodekeeper::v1::AppList& apps);
};

}  // namespace nk::ui
