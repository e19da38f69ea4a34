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

}  // namespace nk::wire
