#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/debug_client.h"
#include "cli/debug_command_parser.h"

namespace nk::cli {

// The debug console behind `nodekeeper debug`: reads command lines (typed,
// or from --batch), carries them out through a DebugClient and prints the
// outcome, as text or as one JSON object per command. Runs the console's
// own commands (wait, gdb, help, quit) itself.
class DebugConsole {
 public:
  // The next line, or nullopt at the end of input.
  using LineSource = std::function<std::optional<std::string>()>;
  // Runs gdb on the program for `function` (empty: no breakpoint); the
  // outcome's message, or an error.
  using GdbRunner = std::function<Result<std::string>(const std::string& function)>;

  DebugConsole(DebugClient& client, std::ostream& out, std::ostream& err, bool json, GdbRunner gdb);

  // Every line until the input ends or `quit`; the exit code: 0 when every
  // command succeeded, else 1.
  int run(const LineSource& lines);
  // The loop of both consoles (live and replay): `run_line` says whether
  // the line succeeded and sets its bool to quit.
  static int runLines(const LineSource& lines, const std::function<bool(const std::string&, bool*)>& run_line);

  // The status as text (the console's and `status`'s form), and as the
  // JSON object --batch prints.
  static std::string statusText(const nodekeeper::v1::DebugStatus& status);
  static nlohmann::ordered_json statusJson(const nodekeeper::v1::DebugStatus& status);

 private:
  bool runLine(const std::string& line, bool* quit);
  void printOutcome(const std::string& command, bool ok, const std::string& message,
                    const nodekeeper::v1::DebugUpdate* update);
  Result<nodekeeper::v1::DebugStatus> poll();
  bool waitFor(const DebugLine& line, std::string* message);

  DebugClient& client_;
  std::ostream& out_;
  std::ostream& err_;
  bool json_;
  GdbRunner gdb_;
};

}  // namespace nk::cli
