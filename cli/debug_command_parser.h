#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"

namespace nk::cli {

// One line of the debug console (`nodekeeper debug`), typed or from
// --batch: either a command for the daemon or one the console runs itself.
struct DebugLine {
  enum class Kind { kEmpty, kRemote, kWaitFinished, kWaitSeconds, kWaitParked, kWaitTasks, kGdb, kHelp, kQuit };
  Kind kind = Kind::kEmpty;
  std::string text;                     // the line as given, trimmed
  nodekeeper::v1::DebugCommand remote;  // kRemote (its command_id unset)
  uint64_t count = 0;                   // kWaitFinished, kWaitParked, kWaitTasks
  double seconds = 0;                   // kWaitSeconds; the timeout of the other waits
  std::string function;                 // kGdb: a breakpoint there, if set
};

class DebugCommandParser {
 public:
  static Result<DebugLine> parse(std::string_view line);
  // The words a line may start with, for completion and help.
  static const std::vector<std::string>& commandWords();
  static const char* helpText();
};

}  // namespace nk::cli
