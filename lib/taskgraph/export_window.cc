#include "taskgraph/export_window.h"

#include <cctype>
#include <cmath>
#include <string>

namespace nk {

Result<int64_t> ExportWindow::parseTime(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  size_t digits = 0;
  bool point = false;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || (!point && text[digits] == '.'))) {
    point = point || text[digits] == '.';
    ++digits;
  }
  std::string_view number = text.substr(0, digits), unit = text.substr(digits);
  if (number.empty() || number == ".")
    return invalidArgument(quoted + " is not a time: give a number and a unit (s, ms, us or ns), e.g. 1.5s");
  double scale = 0;
  if (unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit.empty() && number.find_first_not_of("0.") == std::string_view::npos) scale = 1;  // plain 0
  else return invalidArgument(quoted + " has no unit or an unknown one: use s, ms, us or ns, e.g. 1.5s");
  const double ns = std::stod(std::string(number)) * scale;
  if (!(ns < 9.2e18)) return invalidArgument(quoted + " is too large a time");
  return static_cast<int64_t>(std::llround(ns));
}

Result<ExportWindow> ExportWindow::parse(std::optional<std::string_view> from, std::optional<std::string_view> to) {
  ExportWindow window;
  if (from) {
    auto ns = parseTime(*from);
    if (!ns) return invalidArgument("--from: " + ns.error().message);
    window.from_ns = *ns;
  }
  if (to) {
    auto ns = parseTime(*to);
    if (!ns) return invalidArgument("--to: " + ns.error().message);
    window.to_ns = *ns;
  }
  if (window.from_ns && window.to_ns && *window.from_ns > *window.to_ns)
    return invalidArgument("--from " + std::string(*from) + " is after --to " + std::string(*to));
  return window;
}

}  // namespace nk
