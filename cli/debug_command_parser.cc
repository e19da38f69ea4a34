#include "cli/debug_command_parser.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace v1 = nodekeeper::v1;

namespace nk::cli {

namespace {

constexpr double kDefaultWaitS = 60;

std::vector<std::string> words(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

Result<uint64_t> taskId(const std::string& text) {
  uint64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    begin += 2;
    base = 16;
  }
  auto [ptr, ec] = std::from_chars(begin, end, value, base);
  if (ec != std::errc() || ptr != end || value == 0)
    return invalidArgument("'" + text + "' is not a task id (a number from 'status', decimal or 0x hex)");
  return value;
}

Result<uint64_t> count(const std::string& text, std::string_view what, uint64_t low, uint64_t high) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < low || value > high)
    return invalidArgument(std::string(what) + ": '" + text + "' is not a number from " + std::to_string(low) +
                           " to " + std::to_string(high));
  return value;
}

Result<double> seconds(const std::string& text, std::string_view what) {
  try {
    size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size() && std::isfinite(value) && value >= 0 && value <= 86400) return value;
  } catch (const std::exception&) {
  }
  return invalidArgument(std::string(what) + ": '" + text + "' is not a number of seconds (0 to 86400)");
}

Result<v1::PauseEvent> pauseEvent(const std::string& text) {
  if (text == "task_start") return v1::PAUSE_EVENT_TASK_START;
  if (text == "task_end") return v1::PAUSE_EVENT_TASK_END;
  if (text == "taskwait") return v1::PAUSE_EVENT_TASKWAIT;
  if (text == "barrier") return v1::PAUSE_EVENT_BARRIER;
  return invalidArgument("pause: '" + text + "' is not an event (task_start, task_end, taskwait, barrier)");
}

Status blockCommand(const std::vector<std::string>& w, bool blocked, DebugLine& out) {
  const std::string verb = blocked ? "block" : "unblock";
  if (w.size() < 2) return invalidArgument(verb + ": name a task (" + verb + " TASK...) or a function (" + verb + " function NAME)");
  if (w[1] == "function") {
    if (w.size() < 3)
      return invalidArgument(verb + " function: give one function name, as 'status' lists it (or its function, "
                                    "or a prefix)");
    // Names have spaces ("fib (fib.c:31)", "f<int, long>"): the rest of the line.
    std::string name = w[2];
    for (size_t i = 3; i < w.size(); ++i) name += " " + w[i];
    out.remote.mutable_block_function()->set_function(name);
    out.remote.mutable_block_function()->set_blocked(blocked);
    return {};
  }
  for (size_t i = 1; i < w.size(); ++i) {
    auto id = taskId(w[i]);
    if (!id) return invalidArgument(verb + ": " + id.error().message);
    out.remote.mutable_block()->add_task_ids(*id);
  }
  out.remote.mutable_block()->set_blocked(blocked);
  return {};
}

}  // namespace

const std::vector<std::string>& DebugCommandParser::commandWords() {
  static const std::vector<std::string> list{"break", "continue", "step", "block", "unblock", "priority", "pause",
                                             "threads", "wait", "status", "gdb", "help", "quit"};
  return list;
}

const char* DebugCommandParser::helpText() {
  return "Commands:\n"
         "  break                      no task may start (running ones finish)\n"
         "  continue                   tasks may start again\n"
         "  step [N]                   let N tasks start (default 1), then break\n"
         "  block TASK...              those tasks may not start (OpenMP: the worker about to\n"
         "                             run one waits; C API runtimes run others)\n"
         "  block function NAME        every task of function NAME, now and later: a name as\n"
         "                             'status' lists it (fib (fib.c:31)), its function (fib:\n"
         "                             each of its constructs) or a prefix of one function's\n"
         "                             names\n"
         "  unblock TASK... | unblock function NAME\n"
         "  priority TASK LEVEL        higher LEVEL first (C API runtimes that ask; OpenMP\n"
         "                             cannot reorder its queue through OMPT); 0 clears\n"
         "  pause EVENT | pause off EVENT\n"
         "                             break when EVENT happens: task_start, task_end,\n"
         "                             taskwait, barrier\n"
         "  threads N                  OpenMP threads for the next parallel regions\n"
         "  wait finished N [TIMEOUT]  until N tasks have finished (default timeout 60 s)\n"
         "  wait parked N [TIMEOUT]    until N workers wait at the gate\n"
         "  wait tasks N [TIMEOUT]     until the daemon knows N tasks\n"
         "  wait seconds S\n"
         "  status                     tasks by state and function, the ready tasks, the gate\n"
         "  gdb [FUNCTION]             attach gdb to the program (a breakpoint on FUNCTION)\n"
         "  help, quit\n"
         "TASK is a task id as 'status' shows it (decimal, or 0x hex).\n";
}

Result<DebugLine> DebugCommandParser::parse(std::string_view line) {
  DebugLine out;
  size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string> w = words(line);
  if (w.empty()) return out;
  for (size_t i = 0; i < w.size(); ++i) out.text += (i ? " " : "") + w[i];
  const std::string& verb = w[0];
  auto arity = [&](size_t low, size_t high, const char* usage) -> Status {
    if (w.size() - 1 < low || w.size() - 1 > high) return invalidArgument(std::string("usage: ") + usage);
    return {};
  };
  out.kind = DebugLine::Kind::kRemote;
  if (verb == "break") {
    if (auto s = arity(0, 0, "break"); !s) return s.error();
    out.remote.mutable_break_all();
  } else if (verb == "continue") {
    if (auto s = arity(0, 0, "continue"); !s) return s.error();
    out.remote.mutable_continue_all();
  } else if (verb == "step") {
    if (auto s = arity(0, 1, "step [N]"); !s) return s.error();
    uint64_t n = 1;
    if (w.size() == 2) {
      auto parsed = count(w[1], "step", 1, 1'000'000);
      if (!parsed) return parsed.error();
      n = *parsed;
    }
    out.remote.mutable_step()->set_tasks(static_cast<uint32_t>(n));
  } else if (verb == "block" || verb == "unblock") {
    if (auto s = blockCommand(w, verb == "block", out); !s) return s.error();
  } else if (verb == "priority") {
    if (auto s = arity(2, 2, "priority TASK LEVEL"); !s) return s.error();
    auto id = taskId(w[1]);
    if (!id) return invalidArgument("priority: " + id.error().message);
    int32_t level = 0;
    auto [ptr, ec] = std::from_chars(w[2].data(), w[2].data() + w[2].size(), level);
    if (ec != std::errc() || ptr != w[2].data() + w[2].size())
      return invalidArgument("priority: '" + w[2] + "' is not a whole number");
    out.remote.mutable_priority()->set_task_id(*id);
    out.remote.mutable_priority()->set_level(level);
  } else if (verb == "pause") {
    if (auto s = arity(1, 2, "pause EVENT | pause off EVENT"); !s) return s.error();
    bool enabled = w.size() == 2;
    if (!enabled && w[1] != "off") return invalidArgument("usage: pause EVENT | pause off EVENT");
    auto event = pauseEvent(w.back());
    if (!event) return event.error();
    out.remote.mutable_pause_on()->set_event(*event);
    out.remote.mutable_pause_on()->set_enabled(enabled);
  } else if (verb == "threads") {
    if (auto s = arity(1, 1, "threads N"); !s) return s.error();
    auto n = count(w[1], "threads", 1, 4096);
    if (!n) return n.error();
    out.remote.set_threads(static_cast<uint32_t>(*n));
  } else if (verb == "status") {
    if (auto s = arity(0, 0, "status"); !s) return s.error();
    out.remote.mutable_status();
  } else if (verb == "wait") {
    if (w.size() < 3)
      return invalidArgument("usage: wait finished N [TIMEOUT] | wait parked N [TIMEOUT] | wait tasks N [TIMEOUT] | wait seconds S");
    if (w[1] == "seconds") {
      if (auto s = arity(2, 2, "wait seconds S"); !s) return s.error();
      auto s = seconds(w[2], "wait seconds");
      if (!s) return s.error();
      out.kind = DebugLine::Kind::kWaitSeconds;
      out.seconds = *s;
    } else if (w[1] == "finished" || w[1] == "parked" || w[1] == "tasks") {
      if (auto s = arity(2, 3, "wait finished|parked|tasks N [TIMEOUT]"); !s) return s.error();
      auto n = count(w[2], "wait " + w[1], 0, UINT64_MAX / 2);
      if (!n) return n.error();
      out.kind = w[1] == "finished" ? DebugLine::Kind::kWaitFinished
                 : w[1] == "parked"   ? DebugLine::Kind::kWaitParked
                                      : DebugLine::Kind::kWaitTasks;
      out.count = *n;
      out.seconds = kDefaultWaitS;
      if (w.size() == 4) {
        auto s = seconds(w[3], "wait " + w[1] + " timeout");
        if (!s) return s.error();
        out.seconds = *s;
      }
    } else {
      return invalidArgument("wait: '" + w[1] + "' is not finished, parked, tasks or seconds");
    }
  } else if (verb == "gdb") {
    if (auto s = arity(0, 1, "gdb [FUNCTION]"); !s) return s.error();
    out.kind = DebugLine::Kind::kGdb;
    if (w.size() == 2) out.function = w[1];
  } else if (verb == "help") {
    out.kind = DebugLine::Kind::kHelp;
  } else if (verb == "quit" || verb == "exit") {
    out.kind = DebugLine::Kind::kQuit;
  } else {
    return invalidArgument("unknown command '" + verb + "' (try 'help')");
  }
  return out;
}

}  // namespace nk::cli
