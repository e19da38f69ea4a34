#pragma once

#include <cstdint>
#include <vector>

#include <string>

#include "base/result.h"
#include "nodekeeper/v1/node.pb.h"

namespace nk::cli {

struct Invocation;

struct WatchSettings {
  uint32_t interval_ms = 1000;
  uint64_t count = 0;  // 0: until interrupted
};

// Validates a command's arguments and builds the request, so that a typo
// fails here with a precise message instead of as a daemon error.
class RequestBuilder {
 public:
  static Result<nodekeeper::v1::SetFrequencyLimitsRequest> frequencyLimits(const Invocation& invocation);
  static Result<nodekeeper::v1::SetGovernorRequest> governor(const Invocation& invocation);
  // "power cap set" and "power cap disable".
  static Result<nodekeeper::v1::SetPowerCapRequest> powerCap(const Invocation& invocation);
  static Result<nodekeeper::v1::SetPolicyRequest> policy(const Invocation& invocation);
  // --cpu of the read-only commands; empty means every CPU.
  static Result<std::vector<uint32_t>> cpuFilter(const Invocation& invocation);
  static Result<WatchSettings> watch(const Invocation& invocation);

  // The app as typed (APP of "budget", --app of "policy"): a number that is
  // an app id or a pid; AppResolver finds which once the apps are listed.
  static Result<uint64_t> appSelector(const Invocation& invocation);
  // WATTS of "budget" in milliwatts, the unit of SetPowerBudgetRequest.
  static Result<uint64_t> powerBudgetMilliwatts(const Invocation& invocation);
  // NAME of "policy set --app"; "default" (or empty) becomes the empty
  // string, which hands the app back to the node's policy.
  static Result<std::string> appPolicyName(const Invocation& invocation);
};

}  // namespace nk::cli
