#include "wire/task_function_name.h"

namespace nk::wire {

std::string_view TaskFunctionName::bareFunction(std::string_view name) {
  if (name.size() > 3 && name.back() == ')') {
    size_t open = name.rfind(" (");
    if (open != std::string_view::npos && open > 0) return name.substr(0, open);
  }
  size_t plus = name.rfind("+0x");
  if (plus != std::string_view::npos && plus > 0) return name.substr(0, plus);
  return name;
}

void TaskFunctionName::cutToFit(std::string& name, size_t max_bytes) {
  if (name.size() <= max_bytes) return;
  static constexpr std::string_view kCut = "...";
  size_t keep = max_bytes - kCut.size();
  // Back to the first byte of a character: UTF-8's continuation bytes are 10xxxxxx.
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
  name.resize(keep);
  name += kCut;
}

}  // namespace nk::wire
