#include "cli/request_builder.h"

#include <gtest/gtest.h>

#include "cli/command_line.h"

namespace nk::cli {
namespace {

Invocation parsed(std::vector<std::string> args) {
  auto invocation = CommandLine::parse(args);
  EXPECT_TRUE(invocation.ok()) << invocation.error().message;
  return invocation.ok() ? *invocation : Invocation{};
}

TEST(RequestBuilder, FrequencyLimitsWithUnits) {
  auto request = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--cpu", "0-2,5", "--min", "1200MHz", "--max", "2.6GHz"}));
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->min_khz(), 1200000u);
  EXPECT_EQ(request->max_khz(), 2600000u);
  EXPECT_EQ(request->speed_khz(), 0u);
  EXPECT_EQ(std::vector<uint32_t>(request->cpus().cpus().begin(), request->cpus().cpus().end()),
            (std::vector<uint32_t>{0, 1, 2, 5}));
}

TEST(RequestBuilder, FrequencyDefaultsToAllCpus) {
  auto request = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--speed", "1.8GHz"}));
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->cpus().cpus_size(), 0);
  EXPECT_EQ(request->speed_khz(), 1800000u);
}

TEST(RequestBuilder, FrequencyErrorsNameTheOption) {
  auto none = RequestBuilder::frequencyLimits(parsed({"freq", "set"}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "freq set needs at least one of --min, --max, --speed");

  auto bad_unit = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--max", "2.0GHzz"}));
  ASSERT_FALSE(bad_unit.ok());
  EXPECT_EQ(bad_unit.error().message.rfind("--max: unknown frequency unit 'GHzz'", 0), 0u) << bad_unit.error().message;

  // A bare number would be kHz to sysfs and GHz to most people: refused.
  for (const char* bare : {"2600", "2.6", "1800000", " 1800 "}) {
    auto no_unit = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--max", bare}));
    ASSERT_FALSE(no_unit.ok()) << bare;
    EXPECT_EQ(no_unit.error().message,
              "--max: '" + std::string(bare) + "' has no unit; write GHz, MHz or kHz (e.g. 2.6GHz, 2600MHz)");
  }

  auto not_a_number = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--min", "fast"}));
  ASSERT_FALSE(not_a_number.ok());
  EXPECT_EQ(not_a_number.error().message.rfind("--min: 'fast' is not a frequency", 0), 0u);

  auto bad_cpus = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--cpu", "3-1", "--max", "2GHz"}));
  ASSERT_FALSE(bad_cpus.ok());
  EXPECT_EQ(bad_cpus.error().message, "--cpu: range '3-1' in CPU list is reversed");

  auto inverted = RequestBuilder::frequencyLimits(parsed({"freq", "set", "--min", "2.6GHz", "--max", "1.2GHz"}));
  ASSERT_FALSE(inverted.ok());
  EXPECT_EQ(inverted.error().message, "--min 2.60 GHz is above --max 1.20 GHz");
}

TEST(RequestBuilder, Governor) {
  auto request = RequestBuilder::governor(parsed({"governor", "set", "userspace", "--cpu", "4"}));
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->governor(), "userspace");
  ASSERT_EQ(request->cpus().cpus_size(), 1);
  EXPECT_EQ(request->cpus().cpus(0), 4u);

  auto spaced = RequestBuilder::governor(parsed({"governor", "set", "on demand"}));
  ASSERT_FALSE(spaced.ok());
  EXPECT_EQ(spaced.error().message, "governor name 'on demand' must not contain spaces or '/'");
}

TEST(RequestBuilder, PowerCapSetAndDisable) {
  auto set = RequestBuilder::powerCap(parsed({"power", "cap", "set", "45000mW", "--package", "0-1"}));
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_DOUBLE_EQ(set->limit_w(), 45.0);
  EXPECT_FALSE(set->disable());
  EXPECT_EQ(set->packages_size(), 2);

  auto all = RequestBuilder::powerCap(parsed({"power", "cap", "set", "80W"}));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->packages_size(), 0);
  EXPECT_DOUBLE_EQ(all->limit_w(), 80.0);

  auto disable = RequestBuilder::powerCap(parsed({"power", "cap", "disable", "--package", "1"}));
  ASSERT_TRUE(disable.ok());
  EXPECT_TRUE(disable->disable());
  ASSERT_EQ(disable->packages_size(), 1);
  EXPECT_EQ(disable->packages(0), 1u);

  auto bad_limit = RequestBuilder::powerCap(parsed({"power", "cap", "set", "45V"}));
  ASSERT_FALSE(bad_limit.ok());
  EXPECT_EQ(bad_limit.error().message.rfind("LIMIT: unknown power unit 'V'", 0), 0u) << bad_limit.error().message;

  auto bad_package = RequestBuilder::powerCap(parsed({"power", "cap", "disable", "--package", "x"}));
  ASSERT_FALSE(bad_package.ok());
  EXPECT_EQ(bad_package.error().message, "--package: 'x' is not a package list (e.g. 0 or 0-1)");
}

TEST(RequestBuilder, Policy) {
  auto request = RequestBuilder::policy(parsed({"policy", "set", "thermal-aware"}));
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->policy(), "thermal-aware");
}

TEST(RequestBuilder, CpuFilter) {
  auto all = RequestBuilder::cpuFilter(parsed({"freq", "get"}));
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
  auto some = RequestBuilder::cpuFilter(parsed({"freq", "get", "--cpu", "2,0"}));
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(*some, (std::vector<uint32_t>{0, 2}));
  auto bad = RequestBuilder::cpuFilter(parsed({"freq", "get", "--cpu", "a"}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("--cpu: ", 0), 0u);
}

TEST(RequestBuilder, Watch) {
  auto defaults = RequestBuilder::watch(parsed({"watch"}));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->interval_ms, 1000u);
  EXPECT_EQ(defaults->count, 0u);

  auto set = RequestBuilder::watch(parsed({"watch", "--interval", "0.25", "--count", "3"}));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->interval_ms, 250u);
  EXPECT_EQ(set->count, 3u);

  auto fast = RequestBuilder::watch(parsed({"watch", "--interval", "0.001"}));
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.error().message, "--interval must be at least 0.01 seconds");
  auto zero = RequestBuilder::watch(parsed({"watch", "--count", "0"}));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "--count must be at least 1");
  auto words = RequestBuilder::watch(parsed({"watch", "--count", "three"}));
  ASSERT_FALSE(words.ok());
  EXPECT_EQ(words.error().message, "--count: 'three' is not a whole number");
}

TEST(RequestBuilder, PowerBudgetAcceptsWattsAndMilliwatts) {
  struct Case {
    std::string text;
    uint64_t milliwatts;
  };
  for (const auto& [text, milliwatts] : std::vector<Case>{
           {"12W", 12000}, {"12.5W", 12500}, {"12000mW", 12000}, {"12", 12000}, {"40 W", 40000}, {"1mW", 1}}) {
    auto result = RequestBuilder::powerBudgetMilliwatts(parsed({"budget", "3", text}));
    ASSERT_TRUE(result.ok()) << text << ": " << result.error().message;
    EXPECT_EQ(*result, milliwatts) << text;
  }
}

TEST(RequestBuilder, PowerBudgetRejectsWhatIsNotAPositivePower) {
  auto message = [](const std::string& text) {
    auto result = RequestBuilder::powerBudgetMilliwatts(parsed({"budget", "3", text}));
    return result.ok() ? "(accepted " + std::to_string(*result) + " mW)" : result.error().message;
  };
  EXPECT_EQ(message("0W"), "WATTS: power '0W' must be positive");
  EXPECT_EQ(message("0"), "WATTS: power '0' must be positive");
  EXPECT_EQ(message("-5W"), "WATTS: power budget '-5W' must be positive");
  EXPECT_EQ(message("lots"), "WATTS: 'lots' is not a power (e.g. 45W, 45000mW)");
  EXPECT_EQ(message(""), "WATTS: '' is not a power (e.g. 45W, 45000mW)");
  EXPECT_EQ(message("12Wx"), "WATTS: unknown power unit 'Wx' in '12Wx' (use W or mW)");
  EXPECT_EQ(message("12 watts please"), "WATTS: unknown power unit 'watts please' in '12 watts please' (use W or mW)");
  EXPECT_EQ(message("1.2.3W"), "WATTS: '1.2.3W' is not a power (e.g. 45W, 45000mW)");
  EXPECT_EQ(message("0.0001mW"), "WATTS: power budget '0.0001mW' is below 1 mW");
  EXPECT_EQ(message("2000000W"), "WATTS: power budget '2000000W' is out of range (at most 1000000 W)");
}

TEST(RequestBuilder, AppSelectorFromPositionalOrOption) {
  auto budget = RequestBuilder::appSelector(parsed({"budget", "41230", "40W"}));
  ASSERT_TRUE(budget.ok()) << budget.error().message;
  EXPECT_EQ(*budget, 41230u);

  auto policy = RequestBuilder::appSelector(parsed({"policy", "get", "--app", "2"}));
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(*policy, 2u);

  auto word = RequestBuilder::appSelector(parsed({"budget", "probe", "40W"}));
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(word.error().message, "APP: 'probe' is not an app id or pid (see 'nodekeeper apps')");

  auto zero = RequestBuilder::appSelector(parsed({"policy", "set", "ondemand", "--app", "0"}));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "--app: '0' is not an app id or pid (see 'nodekeeper apps')");

  auto negative = RequestBuilder::appSelector(parsed({"budget", "-3", "40W"}));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().message, "APP: '-3' is not an app id or pid (see 'nodekeeper apps')");

  auto missing = RequestBuilder::appSelector(parsed({"policy", "get"}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "--app is missing");
}

TEST(RequestBuilder, AppPolicyName) {
  auto named = RequestBuilder::appPolicyName(parsed({"policy", "set", "ondemand", "--app", "1"}));
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, "ondemand");

  for (const char* reset : {"default", ""}) {
    auto back = RequestBuilder::appPolicyName(parsed({"policy", "set", reset, "--app", "1"}));
    ASSERT_TRUE(back.ok()) << reset;
    EXPECT_EQ(*back, "") << reset;
  }

  auto spaced = RequestBuilder::appPolicyName(parsed({"policy", "set", "on demand", "--app", "1"}));
  ASSERT_FALSE(spaced.ok());
  EXPECT_EQ(spaced.error().message, "policy name 'on demand' must not contain spaces or '/'");
}

}  // namespace
}  // namespace nk::cli
