#include "cli/tasks_formatter.h"

#include <nlohmann/json.hpp>

#include "cli/table.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;
using Json = nlohmann::ordered_json;

std::string TasksFormatter::sessionsText(const pb::SessionList& sessions) {
  if (sessions.sessions().empty())
    return "No task sessions (run a program with NODEKEEPER_TASKS=lossless and libnodekeeper as its OMPT tool).\n";
  Table table({{"SESSION", Table::Align::kRight},
               {"PID", Table::Align::kRight},
               {"UID", Table::Align::kRight},
               {"TASKS", Table::Align::kRight},
               {"PROGRAM", Table::Align::kLeft}});
  for (const auto& s : sessions.sessions())
    table.addRow({std::to_string(s.session_id()), std::to_string(s.pid()), std::to_string(s.uid()),
                  std::to_string(s.tasks()), s.program().empty() ? "-" : s.program()});
  return table.render();
}

std::string TasksFormatter::sessionsJson(const pb::SessionList& sessions) {
  Json list = Json::array();
  for (const auto& s : sessions.sessions())
    list.push_back({{"session_id", s.session_id()},
                    {"pid", s.pid()},
                    {"uid", s.uid()},
                    {"tasks", s.tasks()},
                    {"program", s.program()}});
  return Json{{"sessions", list}}.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace nk::cli
