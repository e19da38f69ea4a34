#include "cli/control_formatter.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/table.h"
#include "cli/value_formatter.h"
#include "base/units.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;
using Json = nlohmann::ordered_json;

Json numberOrNull(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }

std::string dump(const Json& value) { return value.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

std::string cpuList(const google::protobuf::RepeatedField<uint32_t>& cpus) {
  if (cpus.empty()) return "-";
  return formatCpuList(std::vector<uint32_t>(cpus.begin(), cpus.end()));
}

std::string joinWords(const google::protobuf::RepeatedPtrField<std::string>& words) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : " ") + word;
  return out.empty() ? "-" : out;
}

Json policyJson(const pb::FrequencyPolicy& policy) {
  Json cpus = Json::array();
  for (uint32_t cpu : policy.cpus()) cpus.push_back(cpu);
  Json governors = Json::array();
  for (const auto& governor : policy.available_governors()) governors.push_back(governor);
  Json available = Json::array();
  for (uint64_t khz : policy.available_khz()) available.push_back(khz);
  return {
      {"id", policy.id()},
      {"cpus", cpus},
      {"driver", policy.driver()},
      {"governor", policy.governor()},
      {"available_governors", governors},
      {"cur_khz", policy.cur_khz()},
      {"min_khz", policy.min_khz()},
      {"max_khz", policy.max_khz()},
      {"cpuinfo_min_khz", policy.cpuinfo_min_khz()},
      {"cpuinfo_max_khz", policy.cpuinfo_max_khz()},
      {"setspeed_khz", policy.setspeed_khz()},
      {"available_khz", available},
      {"intel_pstate_active", policy.intel_pstate_active()},
  };
}

Json policiesArray(const pb::FrequencyPolicies& policies) {
  Json array = Json::array();
  for (const auto& policy : policies.policies()) array.push_back(policyJson(policy));
  return array;
}

Json capsArray(const pb::PowerCaps& caps) {
  Json array = Json::array();
  for (const auto& cap : caps.caps())
    array.push_back({{"package", cap.package()},
                     {"zone", cap.zone()},
                     {"limit_w", numberOrNull(cap.limit_w())},
                     {"enabled", cap.enabled()}});
  return array;
}

std::string withName(uint32_t id, const std::optional<std::string>& name) {
  return name ? std::to_string(id) + " (" + *name + ")" : std::to_string(id);
}

}  // namespace

pb::FrequencyPolicies ControlFormatter::selectPolicies(const pb::FrequencyPolicies& policies,
                                                       const std::vector<uint32_t>& cpus) {
  if (cpus.empty()) return policies;
  pb::FrequencyPolicies selected;
  selected.set_message(policies.message());
  for (const auto& policy : policies.policies()) {
    bool covers = std::any_of(policy.cpus().begin(), policy.cpus().end(), [&](uint32_t cpu) {
      return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
    });
    if (covers) *selected.add_policies() = policy;
  }
  return selected;
}

std::string ControlFormatter::policiesText(const pb::FrequencyPolicies& policies) {
  Table table({{"POLICY"},
               {"CPUS"},
               {"DRIVER"},
               {"GOVERNOR"},
               {"CUR", Table::Align::kRight},
               {"MIN", Table::Align::kRight},
               {"MAX", Table::Align::kRight},
               {"HW RANGE", Table::Align::kRight},
               {"SETSPEED", Table::Align::kRight},
               {"AVAIL", Table::Align::kRight}});
  for (const auto& policy : policies.policies()) {
    table.addRow({"policy" + std::to_string(policy.id()), cpuList(policy.cpus()),
                  policy.driver().empty() ? "-" : policy.driver(), policy.governor().empty() ? "-" : policy.governor(),
                  ValueFormatter::frequency(policy.cur_khz()), ValueFormatter::frequency(policy.min_khz()),
                  ValueFormatter::frequency(policy.max_khz()),
                  ValueFormatter::frequencyRange(policy.cpuinfo_min_khz(), policy.cpuinfo_max_khz()),
                  ValueFormatter::frequency(policy.setspeed_khz()),
                  // intel_pstate lists no frequencies: any value in the range goes.
                  policy.available_khz().empty() ? "-" : std::to_string(policy.available_khz_size())});
  }
  return table.render();
}

std::string ControlFormatter::governorsText(const pb::FrequencyPolicies& policies) {
  Table table({{"POLICY"}, {"CPUS"}, {"GOVERNOR"}, {"AVAILABLE"}});
  for (const auto& policy : policies.policies())
    table.addRow({"policy" + std::to_string(policy.id()), cpuList(policy.cpus()),
                  policy.governor().empty() ? "-" : policy.governor(), joinWords(policy.available_governors())});
  return table.render();
}

std::string ControlFormatter::policiesJson(const pb::FrequencyPolicies& policies) {
  return dump(policiesArray(policies));
}

std::string ControlFormatter::frequencyReplyJson(const pb::FrequencyPolicies& reply) {
  return dump(Json{{"message", reply.message()}, {"policies", policiesArray(reply)}});
}

std::string ControlFormatter::powerCapsText(const pb::PowerCaps& caps) {
  Table table({{"PACKAGE", Table::Align::kRight}, {"ZONE"}, {"LIMIT", Table::Align::kRight}, {"STATE"}});
  for (const auto& cap : caps.caps()) {
    bool has_limit = std::isfinite(cap.limit_w()) && cap.limit_w() > 0;
    table.addRow({std::to_string(cap.package()), cap.zone().empty() ? "-" : cap.zone(),
                  has_limit ? ValueFormatter::power(cap.limit_w()) : "-", cap.enabled() ? "enabled" : "disabled"});
  }
  return table.render();
}

std::string ControlFormatter::powerCapsJson(const pb::PowerCaps& caps) { return dump(capsArray(caps)); }

std::string ControlFormatter::powerCapReplyJson(const pb::PowerCaps& reply) {
  return dump(Json{{"message", reply.message()}, {"caps", capsArray(reply)}});
}

std::string ControlFormatter::nodePolicyText(const pb::NodePolicy& policy) {
  std::string out = "Policy     " + (policy.policy().empty() ? std::string("-") : policy.policy()) + "\n";
  out += "Available  " + joinWords(policy.available()) + "\n";
  return out;
}

std::string ControlFormatter::nodePolicyJson(const pb::NodePolicy& policy) {
  Json available = Json::array();
  for (const auto& name : policy.available()) available.push_back(name);
  return dump(Json{{"policy", policy.policy()}, {"available", available}});
}

std::string ControlFormatter::identityText(const pb::Identity& identity, const std::optional<std::string>& user,
                                           const std::optional<std::string>& group) {
  std::string out = "pid   " + std::to_string(identity.pid()) + "\n";
  out += "uid   " + withName(identity.uid(), user) + "\n";
  out += "gid   " + withName(identity.gid(), group) + "\n";
  out += "role  " + roleName(identity.role()) + "\n";
  return out;
}

std::string ControlFormatter::identityJson(const pb::Identity& identity, const std::optional<std::string>& user,
                                           const std::optional<std::string>& group) {
  return dump(Json{{"pid", identity.pid()},
                   {"uid", identity.uid()},
                   {"user", user ? Json(*user) : Json(nullptr)},
                   {"gid", identity.gid()},
                   {"group", group ? Json(*group) : Json(nullptr)},
                   {"role", roleName(identity.role())}});
}

std::string ControlFormatter::roleName(pb::Role role) {
  switch (role) {
    case pb::ROLE_ADMIN: return "admin";
    case pb::ROLE_OWNER: return "owner";
    case pb::ROLE_ANYONE: return "anyone";
    default: return "unspecified";
  }
}

}  // namespace nk::cli
