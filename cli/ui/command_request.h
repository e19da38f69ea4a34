#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"

namespace nk::ui {

// The body of POST /api/sessions/ID/command, checked whole before anything
// is sent: an unknown action, a missing field or one of the wrong type or
// range is one error naming it, and nothing goes to the daemon.
struct CommandRequest {
  nodekeeper::v1::DebugCommand command;
  // {"action":"gdb"}: the page cannot run gdb; the server answers with the
  // console's command line for it instead of calling the daemon.
  bool gdb = false;
  std::string gdb_function;

  static Result<CommandRequest> parse(std::string_view body);
};

}  // namespace nk::ui
