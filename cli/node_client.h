#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "nodekeeper/v1/node.pb.h"

namespace nk::cli {

class InterruptWatcher;

// The CLI's side of nodekeeper.v1.NodeService over the daemon's Unix socket.
// Every call carries a deadline; failures come back as one-line messages
// meant for the user (the daemon's own text where it sent one).
class NodeClient {
 public:
  NodeClient(std::string socket_path, std::chrono::milliseconds timeout);
  ~NodeClient();
  NodeClient(const NodeClient&) = delete;
  NodeClient& operator=(const NodeClient&) = delete;

  Result<nodekeeper::v1::Topology> getTopology();
  Result<nodekeeper::v1::TelemetrySnapshot> getTelemetry(bool fresh);
  Result<nodekeeper::v1::FrequencyPolicies> getFrequencyPolicies();
  Result<nodekeeper::v1::FrequencyPolicies> setFrequencyLimits(const nodekeeper::v1::SetFrequencyLimitsRequest& request);
  Result<nodekeeper::v1::FrequencyPolicies> setGovernor(const nodekeeper::v1::SetGovernorRequest& request);
  Result<nodekeeper::v1::PowerCaps> getPowerCaps();
  Result<nodekeeper::v1::PowerCaps> setPowerCap(const nodekeeper::v1::SetPowerCapRequest& request);
  Result<nodekeeper::v1::NodePolicy> getPolicy();
  Result<nodekeeper::v1::NodePolicy> setPolicy(const nodekeeper::v1::SetPolicyRequest& request);
  Result<nodekeeper::v1::Identity> whoAmI();

  // Calls `on_snapshot` for each streamed snapshot until it returns false,
  // `interrupts` reports Ctrl-C, or the daemon ends the stream. A stream
  // silent for longer than the interval plus the timeout is an error.
  Status streamTelemetry(uint32_t interval_ms,
                         const std::function<bool(const nodekeeper::v1::TelemetrySnapshot&)>& on_snapshot,
                         const InterruptWatcher* interrupts);

  const std::string& socketPath() const { return socket_path_; }

 private:
  struct Impl;

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::cli
