#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "taskgraph/task_graph.h"

namespace nk::cli {

// The debug console over a recording (a .nkrec file, or an ended session):
// the graph is rebuilt one event at a time, as if the program were running,
// and the user steps through it (next, until, goto, status). Nothing runs,
// so the live console's controls are refused. Knows no gRPC: the events come
// from whoever read the recording.
class ReplayConsole {
 public:
  using LineSource = std::function<std::optional<std::string>()>;

  // `label` names the recording in status ("session 3", a file's path).
  ReplayConsole(std::string label, std::ostream& out, std::ostream& err, bool json);

  // Adds events after those already given, in recorded order. Function
  // names are copied: the events may point into a batch about to be reused.
  void append(std::span<const GraphEvent> events);

  // Every line until the input ends or `quit`; 0 when every command
  // succeeded, else 1 (as DebugConsole::run).
  int run(const LineSource& lines);
  // One line; false when it failed.
  bool runLine(const std::string& line, bool* quit);

  size_t position() const { return position_; }  // events applied so far
  size_t total() const { return events_.size(); }
  const TaskGraph& graph() const { return graph_; }

  // What event `index` (0-based) did, e.g. "started task 123 on thread 1".
  std::string describe(size_t index) const;
  static const std::vector<std::string>& commandWords();
  static const char* helpText();

 private:
  void applyNext();
  // Applies events until `done` holds or the recording ends; whether it held.
  bool applyUntil(const std::function<bool()>& done);
  std::string where() const;  // "event K/TOTAL"
  std::string statusText() const;
  void printOutcome(const std::string& command, bool ok, const std::string& message, bool with_status,
                    const std::vector<std::string>* applied = nullptr);

  std::string label_;
  std::ostream& out_;
  std::ostream& err_;
  bool json_;
  // Node-based, so the views into it that events_ hold stay valid as it grows.
  std::unordered_set<std::string> names_;
  std::vector<GraphEvent> events_;
  TaskGraph graph_;
  size_t position_ = 0;
};

}  // namespace nk::cli
