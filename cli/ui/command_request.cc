#include "cli/ui/command_request.h"

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace v1 = nodekeeper::v1;

namespace nk::ui {

namespace {

using nlohmann::json;

Result<uint64_t> unsignedField(const json& body, const char* name, uint64_t min, uint64_t max) {
  auto found = body.find(name);
  if (found == body.end()) return invalidArgument(std::string("missing field '") + name + "'");
  if (!found->is_number_unsigned())
    return invalidArgument(std::string("field '") + name + "' must be a whole number from " + std::to_string(min) +
                           " to " + std::to_string(max));
  uint64_t value = found->get<uint64_t>();
  if (value < min || value > max)
    return invalidArgument(std::string("field '") + name + "' must be a whole number from " + std::to_string(min) +
                           " to " + std::to_string(max));
  return value;
}

Result<int64_t> signedField(const json& body, const char* name, int64_t min, int64_t max) {
  auto found = body.find(name);
  if (found == body.end()) return invalidArgument(std::string("missing field '") + name + "'");
  std::string range = " must be a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (!found->is_number_integer()) return invalidArgument(std::string("field '") + name + "'" + range);
  if (found->is_number_unsigned() && found->get<uint64_t>() > static_cast<uint64_t>(max))
    return invalidArgument(std::string("field '") + name + "'" + range);
  int64_t value = found->get<int64_t>();
  if (value < min || value > max) return invalidArgument(std::string("field '") + name + "'" + range);
  return value;
}

Result<std::string> functionField(const json& body, bool required) {
  auto found = body.find("function");
  if (found == body.end()) {
    if (required) return invalidArgument("missing field 'function'");
    return std::string();
  }
  if (!found->is_string()) return invalidArgument("field 'function' must be a string");
  std::string name = found->get<std::string>();
  if (required && name.empty()) return invalidArgument("field 'function' is empty");
  if (name.size() > 1024) return invalidArgument("field 'function' is longer than 1024 characters");
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return invalidArgument("field 'function' holds a control character");
  return name;
}

Result<v1::PauseEvent> pauseEvent(const json& body) {
  auto found = body.find("event");
  if (found == body.end()) return invalidArgument("missing field 'event'");
  const std::string choices = " must be one of task_start, task_end, taskwait, barrier";
  if (!found->is_string()) return invalidArgument("field 'event'" + choices);
  std::string name = found->get<std::string>();
  if (name == "task_start") return v1::PAUSE_EVENT_TASK_START;
  if (name == "task_end") return v1::PAUSE_EVENT_TASK_END;
  if (name == "taskwait") return v1::PAUSE_EVENT_TASKWAIT;
  if (name == "barrier") return v1::PAUSE_EVENT_BARRIER;
  return invalidArgument("field 'event'" + choices);
}

Result<bool> boolField(const json& body, const char* name) {
  auto found = body.find(name);
  if (found == body.end()) return invalidArgument(std::string("missing field '") + name + "'");
  if (!found->is_boolean()) return invalidArgument(std::string("field '") + name + "' must be true or false");
  return found->get<bool>();
}

constexpr uint64_t kMaxTaskId = std::numeric_limits<uint64_t>::max();

}  // namespace

Result<CommandRequest> CommandRequest::parse(std::string_view body) {
  json parsed = json::parse(body, nullptr, false);
  if (parsed.is_discarded()) return invalidArgument("the body is not JSON");
  if (!parsed.is_object()) return invalidArgument("the body must be a JSON object with an 'action'");
  auto action_field = parsed.find("action");
  if (action_field == parsed.end()) return invalidArgument("missing field 'action'");
  if (!action_field->is_string()) return invalidArgument("field 'action' must be a string");
  const std::string action = action_field->get<std::string>();

  CommandRequest request;
  v1::DebugCommand& c = request.command;
  if (action == "break") {
    c.mutable_break_all();
  } else if (action == "continue") {
    c.mutable_continue_all();
  } else if (action == "status") {
    c.mutable_status();
  } else if (action == "step") {
    auto tasks = unsignedField(parsed, "tasks", 1, 1000000);
    if (!tasks) return tasks.error();
    c.mutable_step()->set_tasks(static_cast<uint32_t>(*tasks));
  } else if (action == "block" || action == "unblock") {
    auto task = unsignedField(parsed, "task", 1, kMaxTaskId);
    if (!task) return task.error();
    c.mutable_block()->add_task_ids(*task);
    c.mutable_block()->set_blocked(action == "block");
  } else if (action == "block_function" || action == "unblock_function") {
    auto function = functionField(parsed, true);
    if (!function) return function.error();
    c.mutable_block_function()->set_function(*function);
    c.mutable_block_function()->set_blocked(action == "block_function");
  } else if (action == "priority") {
    auto task = unsignedField(parsed, "task", 1, kMaxTaskId);
    if (!task) return task.error();
    auto level = signedField(parsed, "level", std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    if (!level) return level.error();
    c.mutable_priority()->set_task_id(*task);
    c.mutable_priority()->set_level(static_cast<int32_t>(*level));
  } else if (action == "pause_on") {
    auto event = pauseEvent(parsed);
    if (!event) return event.error();
    auto enabled = boolField(parsed, "enabled");
    if (!enabled) return enabled.error();
    c.mutable_pause_on()->set_event(*event);
    c.mutable_pause_on()->set_enabled(*enabled);
  } else if (action == "threads") {
    auto count = unsignedField(parsed, "count", 1, 4096);
    if (!count) return count.error();
    c.set_threads(static_cast<uint32_t>(*count));
  } else if (action == "gdb") {
    auto function = functionField(parsed, false);
    if (!function) return function.error();
    request.gdb = true;
    request.gdb_function = *function;
  } else {
    return invalidArgument("unknown action '" + action.substr(0, 64) +
                           "' (one of break, continue, step, block, unblock, block_function, unblock_function, "
                           "priority, pause_on, threads, status, gdb)");
  }
  return request;
}

}  // namespace nk::ui
