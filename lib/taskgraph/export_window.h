#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.h"

namespace nk {

// The part of a session an export keeps (nodekeeper export --from/--to):
// the task runs that overlap [from, to], times relative to the session's
// first recorded event. Either end may be open.
struct ExportWindow {
  std::optional<int64_t> from_ns, to_ns;

  // "1.5s", "250ms", "40us", "900ns" (and "0") -> nanoseconds. Refuses a
  // missing or unknown unit, a negative or non-numeric value and values past
  // about 292 years, with a one-line reason.
  static Result<int64_t> parseTime(std::string_view text);
  // Both ends parsed (either may be absent); refuses from > to.
  static Result<ExportWindow> parse(std::optional<std::string_view> from, std::optional<std::string_view> to);
};

}  // namespace nk
