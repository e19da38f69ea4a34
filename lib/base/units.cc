#include "base/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace nk {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> splitWhitespace(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits "1.8GHz" into 1.8 and "GHz".
Result<std::pair<double, std::string_view>> splitNumberAndUnit(std::string_view text, std::string_view what) {
  std::string_view input = trim(text);
  size_t end = 0;
  while (end < input.size() && (std::isdigit(static_cast<unsigned char>(input[end])) || input[end] == '.')) ++end;
  if (end == 0) return invalidArgument("'" + std::string(text) + "' is not a " + std::string(what));
  double number = 0;
  auto [ptr, ec] = std::from_chars(input.data(), input.data() + end, number);
  if (ec != std::errc() || ptr != input.data() + end || !std::isfinite(number))
    return invalidArgument("'" + std::string(text) + "' is not a " + std::string(what));
  return std::pair<double, std::string_view>{number, trim(input.substr(end))};
}

}  // namespace

Result<uint64_t> parseFrequencyKhz(std::string_view text) {
  auto parts = splitNumberAndUnit(text, "frequency (e.g. 1.8GHz, 1800MHz, 1800000kHz)");
  if (!parts) return parts.error();
  auto [number, unit] = *parts;
  double factor = 0;
  if (unit.empty() || iequals(unit, "khz")) factor = 1;
  else if (iequals(unit, "mhz")) factor = 1e3;
  else if (iequals(unit, "ghz")) factor = 1e6;
  else if (iequals(unit, "hz")) factor = 1e-3;
  else return invalidArgument("unknown frequency unit '" + std::string(unit) + "' in '" + std::string(text) + "' (use kHz, MHz or GHz)");
  double khz = number * factor;
  if (khz < 1 || khz > 1e9) return invalidArgument("frequency '" + std::string(text) + "' is out of range");
  return static_cast<uint64_t>(std::llround(khz));
}

std::string formatFrequencyKhz(uint64_t khz) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f GHz", static_cast<double>(khz) / 1e6);
  return buffer;
}

Result<double> parsePowerWatts(std::string_view text) {
  auto parts = splitNumberAndUnit(text, "power (e.g. 45W, 45000mW)");
  if (!parts) return parts.error();
  auto [number, unit] = *parts;
  double watts = 0;
  if (unit.empty() || iequals(unit, "w")) watts = number;
  else if (iequals(unit, "mw")) watts = number / 1e3;
  else if (iequals(unit, "uw")) watts = number / 1e6;
  else if (iequals(unit, "kw")) watts = number * 1e3;
  else return invalidArgument("unknown power unit '" + std::string(unit) + "' in '" + std::string(text) + "' (use W or mW)");
  if (watts <= 0) return invalidArgument("power '" + std::string(text) + "' must be positive");
  return watts;
}

Result<std::vector<uint32_t>> parseCpuList(std::string_view text) {
  std::set<uint32_t> cpus;
  std::string_view rest = trim(text);
  if (rest.empty()) return invalidArgument("empty CPU list");
  auto parseNumber = [&](std::string_view s) -> Result<uint32_t> {
    s = trim(s);
    uint32_t value = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
      return invalidArgument("'" + std::string(s) + "' in CPU list '" + std::string(text) + "' is not a CPU number");
    return value;
  };
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      auto cpu = parseNumber(item);
      if (!cpu) return cpu.error();
      cpus.insert(*cpu);
    } else {
      auto first = parseNumber(item.substr(0, dash));
      if (!first) return first.error();
      auto last = parseNumber(item.substr(dash + 1));
      if (!last) return last.error();
      if (*last < *first)
        return invalidArgument("range '" + std::string(trim(item)) + "' in CPU list is reversed");
      if (*last - *first > 65536) return invalidArgument("range '" + std::string(trim(item)) + "' is too large");
      for (uint32_t cpu = *first; cpu <= *last; ++cpu) cpus.insert(cpu);
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return std::vector<uint32_t>(cpus.begin(), cpus.end());
}

std::string formatCpuList(const std::vector<uint32_t>& cpus) {
  std::vector<uint32_t> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    if (j > i) out += '-' + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace nk
