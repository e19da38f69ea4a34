#include "taskgraph/function_name_limits.h"

#include "wire/task_function_name.h"

namespace nk {

std::string_view FunctionNameLimits::fit(std::string_view name, std::string& scratch) {
  if (name.size() <= kMaxNameBytes) return name;
  scratch.assign(name.substr(0, kMaxNameBytes + 1));  // enough to cut from
  wire::TaskFunctionName::cutToFit(scratch, kMaxNameBytes);
  return scratch;
}

}  // namespace nk
