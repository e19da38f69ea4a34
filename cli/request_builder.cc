#include "cli/request_builder.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "cli/command_line.h"
#include "cli/command_table.h"
#include "base/units.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;

Result<std::vector<uint32_t>> optionalCpuList(const Invocation& invocation) {
  auto text = invocation.options.value("cpu");
  if (!text) return std::vector<uint32_t>{};
  auto cpus = parseCpuList(*text);
  if (!cpus) return invalidArgument("--cpu: " + cpus.error().message);
  return cpus;
}

Result<uint64_t> optionalFrequency(const Invocation& invocation, const std::string& option) {
  auto text = invocation.options.value(option);
  if (!text) return uint64_t{0};
  // sysfs counts in kHz, people in GHz: a bare number is refused rather
  // than guessed (2.6 taken as 2.6 kHz, 2600 as 2.6 MHz).
  const size_t last = text->find_last_not_of(" \t");
  if (last != std::string::npos && (std::isdigit(static_cast<unsigned char>((*text)[last])) || (*text)[last] == '.'))
    return invalidArgument("--" + option + ": '" + *text +
                           "' has no unit; write GHz, MHz or kHz (e.g. 2.6GHz, 2600MHz)");
  auto khz = parseFrequencyKhz(*text);
  if (!khz) return invalidArgument("--" + option + ": " + khz.error().message);
  return khz;
}

// Names are written to sysfs or looked up by the daemon; a blank or a space
// cannot be right and would only produce a confusing daemon error.
Status checkName(const std::string& name, const std::string& what) {
  if (name.empty()) return invalidArgument(what + " name is empty");
  if (name.find_first_of(" \t\n/") != std::string::npos)
    return invalidArgument(what + " name '" + name + "' must not contain spaces or '/'");
  return {};
}

// A budget of a megawatt is a typo, not a node; the bound also keeps the
// conversion to milliwatts far inside uint64 and the daemon's int64.
constexpr double kMaxPowerBudgetWatts = 1e6;

}  // namespace

Result<pb::SetFrequencyLimitsRequest> RequestBuilder::frequencyLimits(const Invocation& invocation) {
  auto cpus = optionalCpuList(invocation);
  if (!cpus) return cpus.error();
  auto min = optionalFrequency(invocation, "min");
  if (!min) return min.error();
  auto max = optionalFrequency(invocation, "max");
  if (!max) return max.error();
  auto speed = optionalFrequency(invocation, "speed");
  if (!speed) return speed.error();
  if (*min == 0 && *max == 0 && *speed == 0)
    return invalidArgument("freq set needs at least one of --min, --max, --speed");
  if (*min != 0 && *max != 0 && *min > *max)
    return invalidArgument("--min " + formatFrequencyKhz(*min) + " is above --max " + formatFrequencyKhz(*max));

  pb::SetFrequencyLimitsRequest request;
  for (uint32_t cpu : *cpus) request.mutable_cpus()->add_cpus(cpu);
  request.set_min_khz(*min);
  request.set_max_khz(*max);
  request.set_speed_khz(*speed);
  return request;
}

Result<pb::SetGovernorRequest> RequestBuilder::governor(const Invocation& invocation) {
  auto cpus = optionalCpuList(invocation);
  if (!cpus) return cpus.error();
  const std::string name = invocation.positionals.empty() ? std::string() : invocation.positionals[0];
  if (auto status = checkName(name, "governor"); !status) return status.error();

  pb::SetGovernorRequest request;
  for (uint32_t cpu : *cpus) request.mutable_cpus()->add_cpus(cpu);
  request.set_governor(name);
  return request;
}

Result<pb::SetPowerCapRequest> RequestBuilder::powerCap(const Invocation& invocation) {
  pb::SetPowerCapRequest request;
  if (auto text = invocation.options.value("package")) {
    auto packages = parseCpuList(*text);
    if (!packages) return invalidArgument("--package: '" + *text + "' is not a package list (e.g. 0 or 0-1)");
    for (uint32_t package : *packages) request.add_packages(package);
  }
  bool disable = invocation.command != nullptr && invocation.command->id == CommandId::kPowerCapDisable;
  if (disable) {
    request.set_disable(true);
    return request;
  }
  const std::string text = invocation.positionals.empty() ? std::string() : invocation.positionals[0];
  auto watts = parsePowerWatts(text);
  if (!watts) return invalidArgument("LIMIT: " + watts.error().message);
  request.set_limit_w(*watts);
  return request;
}

Result<pb::SetPolicyRequest> RequestBuilder::policy(const Invocation& invocation) {
  const std::string name = invocation.positionals.empty() ? std::string() : invocation.positionals[0];
  if (auto status = checkName(name, "policy"); !status) return status.error();
  pb::SetPolicyRequest request;
  request.set_policy(name);
  return request;
}

Result<std::vector<uint32_t>> RequestBuilder::cpuFilter(const Invocation& invocation) {
  return optionalCpuList(invocation);
}

Result<WatchSettings> RequestBuilder::watch(const Invocation& invocation) {
  WatchSettings settings;
  if (auto text = invocation.options.value("interval")) {
    double seconds = 0;
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), seconds);
    if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || !std::isfinite(seconds))
      return invalidArgument("--interval: '" + *text + "' is not a number of seconds");
    // The daemon streams at most every 10 ms.
    if (seconds < 0.01) return invalidArgument("--interval must be at least 0.01 seconds");
    if (seconds > 3600) return invalidArgument("--interval must be at most 3600 seconds");
    settings.interval_ms = static_cast<uint32_t>(std::llround(seconds * 1000));
  }
  if (auto text = invocation.options.value("count")) {
    uint64_t count = 0;
    auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), count);
    if (text->empty() || ec != std::errc() || ptr != text->data() + text->size())
      return invalidArgument("--count: '" + *text + "' is not a whole number");
    if (count == 0) return invalidArgument("--count must be at least 1");
    settings.count = count;
  }
  return settings;
}

Result<uint64_t> RequestBuilder::appSelector(const Invocation& invocation) {
  // "budget" names the app first; "policy" takes it through --app.
  bool positional = invocation.command != nullptr && invocation.command->id == CommandId::kBudget;
  std::string label = positional ? "APP" : "--app";
  std::optional<std::string> text;
  if (!positional) text = invocation.options.value("app");
  else if (!invocation.positionals.empty()) text = invocation.positionals[0];
  if (!text) return invalidArgument(label + " is missing");
  uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), number);
  if (text->empty() || ec != std::errc() || ptr != text->data() + text->size() || number == 0)
    return invalidArgument(label + ": '" + *text + "' is not an app id or pid (see 'nodekeeper apps')");
  return number;
}

Result<uint64_t> RequestBuilder::powerBudgetMilliwatts(const Invocation& invocation) {
  const std::string text = invocation.positionals.size() < 2 ? std::string() : invocation.positionals[1];
  // parsePowerWatts would call "-5W" "not a power"; the sign is the real problem.
  if (!trim(text).empty() && trim(text).front() == '-')
    return invalidArgument("WATTS: power budget '" + text + "' must be positive");
  auto watts = parsePowerWatts(text);
  if (!watts) return invalidArgument("WATTS: " + watts.error().message);
  if (*watts > kMaxPowerBudgetWatts)
    return invalidArgument("WATTS: power budget '" + text + "' is out of range (at most 1000000 W)");
  auto milliwatts = static_cast<uint64_t>(std::llround(*watts * 1000.0));
  if (milliwatts == 0) return invalidArgument("WATTS: power budget '" + text + "' is below 1 mW");
  return milliwatts;
}

Result<std::string> RequestBuilder::appPolicyName(const Invocation& invocation) {
  const std::string name = invocation.positionals.empty() ? std::string() : invocation.positionals[0];
  if (name.empty() || name == "default") return std::string();
  if (auto status = checkName(name, "policy"); !status) return status.error();
  return name;
}

}  // namespace nk::cli
