#include "cli/control_formatter.h"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/table.h"

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;

pb::FrequencyPolicies makePolicies() {
  pb::FrequencyPolicies policies;
  policies.set_message("set scaling_max_freq to 2.00 GHz on policy0-1");
  for (uint32_t id = 0; id < 2; ++id) {
    pb::FrequencyPolicy* policy = policies.add_policies();
    policy->set_id(id);
    policy->add_cpus(id * 2);
    policy->add_cpus(id * 2 + 1);
    policy->set_driver(id == 0 ? "acpi-cpufreq" : "intel_pstate");
    policy->set_governor(id == 0 ? "userspace" : "powersave");
    policy->add_available_governors("performance");
    policy->add_available_governors("powersave");
    policy->set_cur_khz(2000000);
    policy->set_min_khz(1200000);
    policy->set_max_khz(2000000);
    policy->set_cpuinfo_min_khz(1200000);
    policy->set_cpuinfo_max_khz(2600000);
    if (id == 0) {
      policy->set_setspeed_khz(2000000);
      for (uint64_t khz = 1200000; khz <= 2600000; khz += 100000) policy->add_available_khz(khz);
    } else {
      policy->set_intel_pstate_active(true);
    }
  }
  return policies;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ControlFormatter, PoliciesTable) {
  auto table = lines(ControlFormatter::policiesText(makePolicies()));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].rfind("POLICY", 0), 0u);
  EXPECT_NE(table[1].find("policy0"), std::string::npos);
  EXPECT_NE(table[1].find("0-1"), std::string::npos);
  EXPECT_NE(table[1].find("1.20-2.60 GHz"), std::string::npos);
  // 15 available frequencies; intel_pstate has none and no setspeed.
  EXPECT_EQ(table[1].substr(table[1].size() - 2), "15");
  EXPECT_EQ(table[2].back(), '-');
  for (const auto& line : table) EXPECT_EQ(Table::displayWidth(line), Table::displayWidth(table[0])) << line;
}

TEST(ControlFormatter, SelectPoliciesByCpu) {
  auto policies = makePolicies();
  EXPECT_EQ(ControlFormatter::selectPolicies(policies, {}).policies_size(), 2);
  auto second = ControlFormatter::selectPolicies(policies, {3});
  ASSERT_EQ(second.policies_size(), 1);
  EXPECT_EQ(second.policies(0).id(), 1u);
  EXPECT_EQ(ControlFormatter::selectPolicies(policies, {1, 2}).policies_size(), 2);
  EXPECT_EQ(ControlFormatter::selectPolicies(policies, {42}).policies_size(), 0);
}

TEST(ControlFormatter, PoliciesJson) {
  auto array = nlohmann::json::parse(ControlFormatter::policiesJson(makePolicies()));
  ASSERT_TRUE(array.is_array());
  ASSERT_EQ(array.size(), 2u);
  for (const char* key : {"id", "cpus", "driver", "governor", "available_governors", "cur_khz", "min_khz", "max_khz",
                          "cpuinfo_min_khz", "cpuinfo_max_khz", "setspeed_khz", "available_khz",
                          "intel_pstate_active"})
    EXPECT_TRUE(array[0].contains(key)) << key;
  EXPECT_EQ(array[0]["available_khz"].size(), 15u);
  EXPECT_EQ(array[1]["intel_pstate_active"], true);

  auto reply = nlohmann::json::parse(ControlFormatter::frequencyReplyJson(makePolicies()));
  EXPECT_EQ(reply["message"], "set scaling_max_freq to 2.00 GHz on policy0-1");
  EXPECT_EQ(reply["policies"].size(), 2u);
}

TEST(ControlFormatter, Governors) {
  auto table = lines(ControlFormatter::governorsText(makePolicies()));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_NE(table[1].find("userspace"), std::string::npos);
  EXPECT_NE(table[1].find("performance powersave"), std::string::npos);
}

TEST(ControlFormatter, PowerCaps) {
  pb::PowerCaps caps;
  caps.set_message("capped package 0 at 45.0 W");
  auto* cap = caps.add_caps();
  cap->set_package(0);
  cap->set_zone("intel-rapl:0");
  cap->set_limit_w(45);
  cap->set_enabled(true);
  cap = caps.add_caps();
  cap->set_package(1);
  cap->set_zone("intel-rapl:1");
  cap->set_limit_w(0);
  cap->set_enabled(false);

  auto table = lines(ControlFormatter::powerCapsText(caps));
  ASSERT_EQ(table.size(), 3u);
  EXPECT_NE(table[1].find("intel-rapl:0"), std::string::npos);
  EXPECT_NE(table[1].find("45.0 W"), std::string::npos);
  EXPECT_NE(table[1].find("enabled"), std::string::npos);
  EXPECT_NE(table[2].find("disabled"), std::string::npos);

  auto array = nlohmann::json::parse(ControlFormatter::powerCapsJson(caps));
  ASSERT_EQ(array.size(), 2u);
  EXPECT_EQ(array[0]["zone"], "intel-rapl:0");
  EXPECT_DOUBLE_EQ(array[0]["limit_w"].get<double>(), 45.0);
  EXPECT_EQ(array[1]["enabled"], false);
  auto reply = nlohmann::json::parse(ControlFormatter::powerCapReplyJson(caps));
  EXPECT_EQ(reply["message"], "capped package 0 at 45.0 W");
  EXPECT_EQ(reply["caps"].size(), 2u);
}

TEST(ControlFormatter, NodePolicy) {
  pb::NodePolicy policy;
  policy.set_policy("thermal-aware");
  policy.add_available("performance");
  policy.add_available("thermal-aware");
  std::string text = ControlFormatter::nodePolicyText(policy);
  EXPECT_NE(text.find("thermal-aware"), std::string::npos);
  EXPECT_NE(text.find("performance thermal-aware"), std::string::npos);
  auto parsed = nlohmann::json::parse(ControlFormatter::nodePolicyJson(policy));
  EXPECT_EQ(parsed["policy"], "thermal-aware");
  EXPECT_EQ(parsed["available"].size(), 2u);
}

TEST(ControlFormatter, Identity) {
  pb::Identity identity;
  identity.set_pid(1234);
  identity.set_uid(1000);
  identity.set_gid(100);
  identity.set_role(pb::ROLE_ADMIN);
  std::string text = ControlFormatter::identityText(identity, std::string("alice"), std::nullopt);
  EXPECT_NE(text.find("1234"), std::string::npos);
  EXPECT_NE(text.find("1000 (alice)"), std::string::npos);
  EXPECT_NE(text.find("gid   100\n"), std::string::npos);
  EXPECT_NE(text.find("role  admin"), std::string::npos);
  auto parsed = nlohmann::json::parse(ControlFormatter::identityJson(identity, std::string("alice"), std::nullopt));
  EXPECT_EQ(parsed["pid"], 1234);
  EXPECT_EQ(parsed["uid"], 1000);
  EXPECT_EQ(parsed["user"], "alice");
  EXPECT_TRUE(parsed["group"].is_null());
  EXPECT_EQ(parsed["role"], "admin");
  EXPECT_EQ(ControlFormatter::roleName(pb::ROLE_ANYONE), "anyone");
  EXPECT_EQ(ControlFormatter::roleName(pb::ROLE_OWNER), "owner");
}

}  // namespace
}  // namespace nk::cli
