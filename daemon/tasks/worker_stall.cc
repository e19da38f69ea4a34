#include "tasks/worker_stall.h"

namespace nk {

namespace {

constexpr size_t kMaxFunctionsNamed = 4;
constexpr size_t kMaxTasksNamed = 8;

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "blocked tasks of fib (3 tasks), g (1 task) and blocked tasks 12 13":
// what holds the workers.
std::string holders(const WorkerStall::Input& in) {
  std::string text;
  if (!in.blocked_functions.empty()) {
    text = "blocked tasks of ";
    for (size_t i = 0; i < in.blocked_functions.size() && i < kMaxFunctionsNamed; ++i)
      text += (i ? ", " : "") + in.blocked_functions[i].function + " (" +
              plural(in.blocked_functions[i].tasks, "task", "tasks") + ")";
    if (in.blocked_functions.size() > kMaxFunctionsNamed)
      text += " and " + std::to_string(in.blocked_functions.size() - kMaxFunctionsNamed) + " more functions";
  }
  if (!in.blocked_tasks.empty()) {
    if (!text.empty()) text += " and ";
    text += in.blocked_tasks.size() == 1 ? "blocked task" : "blocked tasks";
    for (size_t i = 0; i < in.blocked_tasks.size() && i < kMaxTasksNamed; ++i)
      text += " " + std::to_string(in.blocked_tasks[i]);
    if (in.blocked_tasks.size() > kMaxTasksNamed)
      text += " and " + std::to_string(in.blocked_tasks.size() - kMaxTasksNamed) + " more";
  }
  return text;
}

// The commands that free them: "'unblock function fib', 'unblock 12 13'".
std::string remedies(const WorkerStall::Input& in) {
  std::vector<std::string> commands;
  for (size_t i = 0; i < in.blocked_functions.size() && i < kMaxFunctionsNamed; ++i)
    commands.push_back("'unblock function " + in.blocked_functions[i].function + "'");
  if (!in.blocked_tasks.empty()) {
    std::string ids;
    for (size_t i = 0; i < in.blocked_tasks.size() && i < kMaxTasksNamed; ++i)
      ids += " " + std::to_string(in.blocked_tasks[i]);
    commands.push_back("'unblock" + ids + (in.blocked_tasks.size() > kMaxTasksNamed ? " ...'" : "'"));
  }
  std::string text;
  for (size_t i = 0; i < commands.size(); ++i)
    text += (i == 0 ? "" : i + 1 == commands.size() ? " and " : ", ") + commands[i];
  return text + (commands.size() == 1 ? " frees them" : " free them");
}

}  // namespace

std::string WorkerStall::explain(const Input& in) {
  if (in.parked_workers == 0 || in.started_since_report) return {};
  // The team as far as the daemon knows it: a worker that never ran a task
  // but is parked still counts.
  if (in.workers > in.parked_workers) return {};
  const bool anything_blocked = !in.blocked_functions.empty() || !in.blocked_tasks.empty();
  std::string who = in.workers == 0 ? plural(in.parked_workers, "worker is", "workers are") + " held"
                    : in.parked_workers == 1 ? std::string("the one worker is held")
                                             : "all " + std::to_string(in.parked_workers) + " workers are held";
  if (in.held && in.steps_left == 0) {
    std::string line = who + " by the break" + "; 'continue' or 'step' lets tasks start";
    if (anything_blocked) line += " (" + holders(in) + " stay held: " + remedies(in) + ")";
    return line;
  }
  // Not held (or stepping): a parked worker waits for a blocked task. With
  // nothing blocked, the count is stale (a worker leaves the gate without
  // a report) and there is nothing to explain.
  if (!anything_blocked) return {};
  return who + " by " + holders(in) + "; " + remedies(in);
}

}  // namespace nk
