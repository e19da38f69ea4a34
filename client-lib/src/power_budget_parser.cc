#include "power_budget_parser.h"

#include <cerrno>
#include <limits>

namespace nk::client {

// Accepts digits only (surrounding blanks allowed), optionally followed by
// "mW"; rejects empty, signed, zero, fractional and overflowing values.
// Returns 0, or -EINVAL with a human-readable reason in *error.
int PowerBudgetParser::parse(std::string_view text, uint64_t* mw, std::string* error) {
  auto fail = [&](const char* why) {
    if (error) *error = why;
    return -EINVAL;
  };
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) text.remove_suffix(1);
  if (text.size() >= 2 && text.substr(text.size() - 2) == "mW") text.remove_suffix(2);
  if (text.empty()) return fail("empty value; expected a positive number of milliwatts");
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return fail("not a positive whole number of milliwatts");
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return fail("value too large");
    value = value * 10 + digit;
  }
  if (value == 0) return fail("a budget of 0 mW is not allowed");
  *mw = value;
  return 0;
}

}  // namespace nk::client
