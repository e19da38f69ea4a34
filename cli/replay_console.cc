#include "cli/replay_console.h"

#include <charconv>
#include <cstdint>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/debug_console.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_graph_summary.h"

namespace v1 = nodekeeper::v1;

namespace nk::cli {

namespace {

using Json = nlohmann::ordered_json;
// As many ready tasks as the daemon lists for a live session.
constexpr size_t kMaxReady = 64;
constexpr const char* kNoSteering = "replay: a recording cannot be steered";

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string trimmed(const std::string& line) {
  size_t begin = line.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  size_t end = line.find_last_not_of(" \t\r\n");
  return line.substr(begin, end - begin + 1);
}

// Decimal, or 0x hex as the daemon's ids are often shown.
std::optional<uint64_t> number(const std::string& text, bool allow_hex) {
  uint64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  int base = 10;
  if (allow_hex && text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    begin += 2;
    base = 16;
  }
  auto [ptr, ec] = std::from_chars(begin, end, value, base);
  if (begin == end || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string hex(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// The live console's status, so that a replay reads (and parses) the same.
v1::DebugStatus debugStatus(const TaskGraph& graph) {
  // Every ready task, so the status says how many are past those listed.
  TaskGraphSummary summary = TaskGraphSummary::of(graph, {}, SIZE_MAX);
  v1::DebugStatus s;
  auto count = [](const std::array<uint64_t, 5>& by_state, TaskState state) {
    return by_state[static_cast<size_t>(state)];
  };
  s.set_not_queued(count(summary.by_state, TaskState::kNotQueued));
  s.set_queued(count(summary.by_state, TaskState::kQueued));
  s.set_running(count(summary.by_state, TaskState::kRunning));
  s.set_finished(count(summary.by_state, TaskState::kFinished));
  for (const auto& f : summary.functions) {
    v1::FunctionCount* out = s.add_functions();
    out->set_function(f.function);
    out->set_not_queued(count(f.by_state, TaskState::kNotQueued));
    out->set_queued(count(f.by_state, TaskState::kQueued));
    out->set_running(count(f.by_state, TaskState::kRunning));
    out->set_finished(count(f.by_state, TaskState::kFinished));
  }
  for (size_t i = 0; i < summary.ready.size() && i < kMaxReady; ++i) s.add_ready(summary.ready[i]);
  s.set_ready_total(summary.ready.size());
  return s;
}

}  // namespace

ReplayConsole::ReplayConsole(std::string label, std::ostream& out, std::ostream& err, bool json)
    : label_(std::move(label)), out_(out), err_(err), json_(json) {}

void ReplayConsole::append(std::span<const GraphEvent> events) {
  events_.reserve(events_.size() + events.size());
  for (GraphEvent e : events) {
    if (!e.function.empty()) e.function = *names_.emplace(e.function).first;
    events_.push_back(e);
  }
}

const std::vector<std::string>& ReplayConsole::commandWords() {
  static const std::vector<std::string> list{"next", "until", "goto", "status", "help", "quit"};
  return list;
}

const char* ReplayConsole::helpText() {
  return "Replay commands (a recording: nothing runs, nothing can be steered):\n"
         "  next [N]                   apply the next N events (default 1), printing each\n"
         "  until finished N           apply events until N tasks have finished\n"
         "  until task ID started|finished\n"
         "                             apply events until task ID has started or finished\n"
         "  goto K                     rebuild the graph from the start up to event K (0: none)\n"
         "  status                     tasks by state, per function, and the ready tasks\n"
         "  help                       this text\n"
         "  quit                       leave (so does the end of input)\n";
}

std::string ReplayConsole::describe(size_t index) const {
  const GraphEvent& e = events_.at(index);
  std::string task = "task " + std::to_string(e.task);
  switch (e.type) {
    case GraphEvent::Type::kCreated: {
      std::string text = "created " + task;
      if (!e.function.empty()) text += " (" + std::string(e.function) + ")";
      if (e.parent) text += " in task " + std::to_string(e.parent);
      return text;
    }
    case GraphEvent::Type::kDependence:
      return "dependence task " + std::to_string(e.from) + " -> " + task + " on " + hex(e.address);
    case GraphEvent::Type::kQueued: return "queued " + task;
    case GraphEvent::Type::kStarted:
      return "started " + task + (e.thread >= 0 ? " on thread " + std::to_string(e.thread) : std::string());
    case GraphEvent::Type::kFinished: return "finished " + task;
    case GraphEvent::Type::kFailed: return "failed " + task;
  }
  return "event of " + task;
}

void ReplayConsole::applyNext() { graph_.apply(events_[position_++]); }

bool ReplayConsole::applyUntil(const std::function<bool()>& done) {
  while (!done()) {
    if (position_ >= events_.size()) return false;
    applyNext();
  }
  return true;
}

std::string ReplayConsole::where() const {
  return "event " + std::to_string(position_) + "/" + std::to_string(events_.size());
}

std::string ReplayConsole::statusText() const {
  std::string live = DebugConsole::statusText(debugStatus(graph_));
  // Its first line is about the gate and the frontends, which a replay has
  // not: that line says where the replay is instead.
  size_t first = live.find('\n');
  return "replay of " + label_ + ": " + where() + ", no control\n" +
         (first == std::string::npos ? std::string() : live.substr(first + 1));
}

void ReplayConsole::printOutcome(const std::string& command, bool ok, const std::string& message, bool with_status,
                                 const std::vector<std::string>* applied) {
  if (json_) {
    Json line;
    line["command"] = command;
    line["ok"] = ok;
    line[ok ? "message" : "error"] = message;
    line["event"] = position_;
    line["events"] = events_.size();
    if (applied) line["applied"] = *applied;
    if (with_status) {
      // The live console's status object, for the same scripts to read.
      Json status = DebugConsole::statusJson(debugStatus(graph_));
      status.erase("session");
      status["recording"] = label_;
      line["status"] = status;
    }
    out_ << line.dump() << "\n" << std::flush;
    return;
  }
  if (applied)
    for (const std::string& text : *applied) out_ << text << "\n";
  if (!ok) err_ << "error: " << message << "\n" << std::flush;
  else if (!applied && !with_status) out_ << message << "\n";  // status's first line says where
  if (ok && with_status) out_ << statusText();
  out_ << std::flush;
}

bool ReplayConsole::runLine(const std::string& raw, bool* quit) {
  const std::string text = trimmed(raw);
  std::vector<std::string> w = words(text);
  if (w.empty() || w[0][0] == '#') return true;
  const std::string& verb = w[0];
  auto refuse = [&](const std::string& message) {
    printOutcome(text, false, message, false);
    return false;
  };

  if (verb == "quit" || verb == "exit") {
    *quit = true;
    return true;
  }
  if (verb == "help") {
    if (json_) printOutcome(text, true, helpText(), false);
    else out_ << helpText() << std::flush;
    return true;
  }
  if (verb == "status") {
    if (w.size() != 1) return refuse("status takes no arguments");
    printOutcome(text, true, where(), true);
    return true;
  }
  if (verb == "next") {
    uint64_t n = 1;
    if (w.size() > 2) return refuse("next: give at most one count (next [N])");
    if (w.size() == 2) {
      auto given = number(w[1], false);
      if (!given || *given == 0) return refuse("next: '" + w[1] + "' is not a positive number of events");
      n = *given;
    }
    if (position_ >= events_.size()) return refuse("next: the recording has no more events (" + where() + ")");
    std::vector<std::string> applied;
    for (uint64_t i = 0; i < n && position_ < events_.size(); ++i) {
      applied.push_back("event " + std::to_string(position_ + 1) + "/" + std::to_string(events_.size()) + ": " +
                        describe(position_));
      applyNext();
    }
    printOutcome(text, true, where(), false, &applied);
    return true;
  }
  if (verb == "until") {
    if (w.size() == 3 && w[1] == "finished") {
      auto n = number(w[2], false);
      if (!n) return refuse("until finished: '" + w[2] + "' is not a number of tasks");
      auto finished = [&] { return graph_.countsByState()[static_cast<size_t>(TaskState::kFinished)]; };
      bool reached = applyUntil([&] { return finished() >= *n; });
      std::string counted = std::to_string(finished()) + " finished";
      if (!reached) {
        printOutcome(text, false, "the recording ended with " + counted + " (" + where() + ")", false);
        return false;
      }
      printOutcome(text, true, counted + " at " + where(), false);
      return true;
    }
    if (w.size() == 4 && w[1] == "task" && (w[3] == "started" || w[3] == "finished")) {
      auto id = number(w[2], true);
      if (!id || *id == 0) return refuse("until task: '" + w[2] + "' is not a task id (decimal or 0x hex)");
      const bool want_finished = w[3] == "finished";
      auto reached_state = [&] {
        const TaskGraph::Task* t = graph_.find(*id);
        if (!t) return false;
        return want_finished ? t->state == TaskState::kFinished
                             : t->state == TaskState::kRunning || t->state == TaskState::kFinished;
      };
      if (!applyUntil(reached_state)) {
        printOutcome(text, false,
                     "the recording ended before task " + w[2] + " " + w[3] + " (" + where() + ")", false);
        return false;
      }
      printOutcome(text, true, "task " + w[2] + " " + w[3] + " at " + where(), false);
      return true;
    }
    return refuse("until: 'until finished N' or 'until task ID started|finished'");
  }
  if (verb == "goto") {
    auto k = w.size() == 2 ? number(w[1], false) : std::nullopt;
    if (!k || *k > events_.size())
      return refuse("goto: give an event number from 0 to " + std::to_string(events_.size()));
    // The graph only moves forwards (a state never goes back): going back
    // means building it again.
    if (*k < position_) {
      graph_ = TaskGraph();
      position_ = 0;
    }
    while (position_ < *k) applyNext();
    printOutcome(text, true, "at " + where(), false);
    return true;
  }
  for (const char* control : {"break", "continue", "step", "block", "unblock", "priority", "pause", "threads", "gdb"})
    if (verb == control) return refuse(kNoSteering);
  if (verb == "wait")
    return refuse(std::string(kNoSteering) + "; nothing runs in it: use 'until finished N' or 'next N'");
  return refuse("unknown command '" + verb + "' (try 'help')");
}

int ReplayConsole::run(const LineSource& lines) {
  return DebugConsole::runLines(lines, [this](const std::string& line, bool* quit) { return runLine(line, quit); });
}

}  // namespace nk::cli
