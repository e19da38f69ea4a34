#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nodekeeper/v1/node.pb.h"

namespace nk::cli {

// Renders the replies of the control commands (freq, governor, power cap,
// policy, whoami) as tables or JSON. Pure, like StatusFormatter.
class ControlFormatter {
 public:
  // The policies covering any of `cpus`; all of them when `cpus` is empty.
  static nodekeeper::v1::FrequencyPolicies selectPolicies(const nodekeeper::v1::FrequencyPolicies& policies,
                                                          const std::vector<uint32_t>& cpus);

  static std::string policiesText(const nodekeeper::v1::FrequencyPolicies& policies);
  static std::string governorsText(const nodekeeper::v1::FrequencyPolicies& policies);
  // A JSON array of the policies ("freq get"), or the whole reply with its
  // message ("freq set", "governor set").
  static std::string policiesJson(const nodekeeper::v1::FrequencyPolicies& policies);
  static std::string frequencyReplyJson(const nodekeeper::v1::FrequencyPolicies& reply);

  static std::string powerCapsText(const nodekeeper::v1::PowerCaps& caps);
  static std::string powerCapsJson(const nodekeeper::v1::PowerCaps& caps);
  static std::string powerCapReplyJson(const nodekeeper::v1::PowerCaps& reply);

  static std::string nodePolicyText(const nodekeeper::v1::NodePolicy& policy);
  static std::string nodePolicyJson(const nodekeeper::v1::NodePolicy& policy);

  // Names are looked up by the caller (NSS is I/O); nullopt prints the number only.
  static std::string identityText(const nodekeeper::v1::Identity& identity, const std::optional<std::string>& user,
                                  const std::optional<std::string>& group);
  static std::string identityJson(const nodekeeper::v1::Identity& identity, const std::optional<std::string>& user,
                                  const std::optional<std::string>& group);

  static std::string roleName(nodekeeper::v1::Role role);
};

}  // namespace nk::cli
