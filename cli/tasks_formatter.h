#pragma once

#include <string>

#include "nodekeeper/v1/tasks.pb.h"

namespace nk::cli {

// Renders TasksService replies ("tasks") as a table or JSON. Pure.
class TasksFormatter {
 public:
  static std::string sessionsText(const nodekeeper::v1::SessionList& sessions);
  static std::string sessionsJson(const nodekeeper::v1::SessionList& sessions);
};

}  // namespace nk::cli
