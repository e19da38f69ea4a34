#include "taskgraph/function_name_limits.h"

namespace nk {

std::string_view FunctionNameLimits::fit(std::string_view name, std::string& scratch) {
  if (name.size() <= kMaxNameBytes) return name;
  static constexpr std::string_view kCut = "...";
  size_t keep = kMaxNameBytes - kCut.size();
  // Back to the first byte of a character: UTF-8's continuation bytes are 10xxxxxx.
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
  scratch.assign(name.substr(0, keep));
  scratch += kCut;
  return scratch;
}

}  // namespace nk
