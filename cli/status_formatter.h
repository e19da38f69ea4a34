#pragma once

#include <string>

#include "nodekeeper/v1/node.pb.h"

namespace nk::cli {

// Renders topology plus one telemetry snapshot, for `status` and `watch`.
// Pure: takes messages, returns text, so tests need no server.
class StatusFormatter {
 public:
  static std::string text(const nodekeeper::v1::Topology& topology, const nodekeeper::v1::TelemetrySnapshot& snapshot);
  // One JSON object and a newline; NaN becomes null. `pretty` indents it,
  // otherwise it is a single line (NDJSON for watch).
  static std::string json(const nodekeeper::v1::Topology& topology, const nodekeeper::v1::TelemetrySnapshot& snapshot,
                          bool pretty);
};

}  // namespace nk::cli
