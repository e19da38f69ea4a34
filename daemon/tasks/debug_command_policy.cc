#include "tasks/debug_command_policy.h"

#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "common/proc_stat.h"
#include "taskgraph/task_graph_summary.h"
#include "wire/task_function_name.h"
#include "tasks/debug_status_view.h"

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

using wire::TaskFunctionName;

std::string listed(const std::vector<std::string>& names) {
  constexpr size_t kListed = 5;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kListed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kListed) out += " (and " + std::to_string(names.size() - kListed) + " more)";
  return out;
}

// The exact names `wanted` stands for among `known` (the graph's): itself;
// else every construct of the function it names ("fib": "fib (fib.c:31)"
// and "fib (fib.c:40)"); else the names it begins, if they are all one
// function's. Anything else is refused, with the candidates.
Result<std::vector<std::string>> matchFunction(const std::set<std::string>& known, const std::string& wanted,
                                               const std::string& verb) {
  if (known.count(wanted)) return std::vector<std::string>{wanted};
  std::vector<std::string> bare, prefixed;
  std::set<std::string_view> functions;
  for (const std::string& name : known) {
    if (TaskFunctionName::bareFunction(name) == wanted) bare.push_back(name);
    if (name.starts_with(wanted)) {
      prefixed.push_back(name);
      functions.insert(TaskFunctionName::bareFunction(name));
    }
  }
  if (!bare.empty()) return bare;
  if (functions.size() == 1) return prefixed;
  if (functions.size() > 1)
    return invalidArgument(verb + " function: '" + wanted + "' could be " + std::to_string(functions.size()) +
                           " functions: " + listed(prefixed) + "; give more of the name");
  std::vector<std::string> all(known.begin(), known.end());
  return notFound(verb + " function: no function '" + wanted + "' among the session's tasks" +
                  (all.empty() ? std::string(" (it has none yet)") : " (" + listed(all) + ")") +
                  "; a function is known once one of its tasks has been created");
}

}  // namespace

DebugCommandPolicy::DebugCommandPolicy(const SessionRegistry& sessions, DebugHub& hub, std::filesystem::path proc_root)
    : sessions_(sessions), hub_(hub), proc_root_(std::move(proc_root)) {}

Result<SessionRegistry::Info> DebugCommandPolicy::sessionFor(const Caller& caller, uint64_t session,
                                                             std::string_view verb) const {
  auto info = sessions_.info(session);
  if (!info) return notFound("no task session " + std::to_string(session) + " (see 'nodekeeper tasks')");
  if (info->uid != caller.uid && !caller.admin)
    return permissionDenied("task session " + std::to_string(info->id) +
                            " belongs to another user; only its owner or an admin may " + std::string(verb) + " it");
  return *info;
}

void DebugCommandPolicy::greet(uint64_t frontend, const SessionRegistry::Info& session, uint64_t command_id) const {
  v1::DebugUpdate hello = statusOf(session.id, command_id);
  DebugHub::GateState gate = hub_.state(session.id);
  hello.mutable_ack()->set_ok(true);
  hello.mutable_ack()->set_message("attached to task session " + std::to_string(session.id) + " (pid " +
                                   std::to_string(session.pid) + ", " + session.program + "); " +
                                   (gate.app ? "live" : "ended: replay only, no control") + "; " +
                                   std::to_string(gate.frontends) + " frontend(s)");
  hub_.answer(frontend, hello);
}

void DebugCommandPolicy::handle(uint64_t frontend, uint64_t session, const Caller& caller,
                                const v1::DebugCommand& command) const {
  const uint64_t id = command.command_id();
  if (command.action_case() == v1::DebugCommand::kStatus) {
    hub_.answer(frontend, statusOf(session, id));
    return;
  }
  if (command.action_case() == v1::DebugCommand::kBlockFunction) {
    auto controls = blockFunction(session, command.block_function());
    if (!controls)
      hub_.answer(frontend, refusal(id, controls.error().message));
    else
      hub_.send(frontend, id, std::move(*controls));
    return;
  }
  auto control = controlFor(session, caller, command);
  if (!control) {
    hub_.answer(frontend, refusal(id, control.error().message));
    return;
  }
  hub_.send(frontend, id, std::move(*control));
}

DebugHub::GraphCounts DebugCommandPolicy::taskCounts(const SessionRegistry& sessions) {
  auto view = std::make_shared<DebugStatusView>(sessions);
  return [view](uint64_t session, v1::DebugStatus* status) { view->fill(session, status); };
}

v1::DebugUpdate DebugCommandPolicy::refusal(uint64_t command_id, std::string message) {
  v1::DebugUpdate update;
  update.set_command_id(command_id);
  update.mutable_ack()->set_ok(false);
  update.mutable_ack()->set_message(std::move(message));
  return update;
}

// The hub fills the status in (DebugStatusView), as it does every status
// it sends.
v1::DebugUpdate DebugCommandPolicy::statusOf(uint64_t /*session*/, uint64_t command_id) const {
  v1::DebugUpdate update;
  update.set_command_id(command_id);
  update.mutable_ack()->set_ok(true);
  update.mutable_status();
  return update;
}

Result<v1::TaskControl> DebugCommandPolicy::controlFor(uint64_t session, const Caller& caller,
                                                       const v1::DebugCommand& command) const {
  v1::TaskControl control;
  switch (command.action_case()) {
    case v1::DebugCommand::kAttach:
      return failedPrecondition("already attached to task session " + std::to_string(session));
    case v1::DebugCommand::kBreakAll: control.set_hold(true); return control;
    case v1::DebugCommand::kContinueAll: control.set_hold(false); return control;
    case v1::DebugCommand::kStep: return step(command.step());
    case v1::DebugCommand::kBlock: return block(session, command.block());
    case v1::DebugCommand::kPriority: return priority(session, command.priority());
    case v1::DebugCommand::kPauseOn: return pauseOn(command.pause_on());
    case v1::DebugCommand::kThreads: return threads(command.threads());
    case v1::DebugCommand::kGdb: return gdb(caller, command.gdb());
    case v1::DebugCommand::kStatus:  // answered by handle(), never a control
    case v1::DebugCommand::kBlockFunction:  // sent by handle(), maybe as several controls
    case v1::DebugCommand::ACTION_NOT_SET: break;
  }
  return invalidArgument("a command with no action");
}

Result<v1::TaskControl> DebugCommandPolicy::step(const v1::Step& step) {
  if (step.tasks() == 0) return invalidArgument("step: the number of tasks must be at least 1");
  v1::TaskControl control;
  control.set_step(step.tasks());
  return control;
}

Result<v1::TaskControl> DebugCommandPolicy::block(uint64_t session, const v1::TaskBlock& block) const {
  if (block.task_ids_size() == 0) return invalidArgument("block: name at least one task");
  // Unblocking a task that has started is harmless; blocking one is not
  // possible.
  if (block.blocked()) {
    for (uint64_t task : block.task_ids()) {
      std::string problem = taskProblem(session, task, true);
      if (!problem.empty()) return failedPrecondition("block: " + problem + "; nothing changed");
    }
  }
  v1::TaskControl control;
  *control.mutable_block() = block;
  return control;
}

// One control per exact name the typed one stands for: the app matches the
// names the graph shows, nothing looser.
Result<std::vector<v1::TaskControl>> DebugCommandPolicy::blockFunction(uint64_t session,
                                                                       const v1::FunctionBlock& block) const {
  const std::string verb = block.blocked() ? "block" : "unblock";
  if (block.function().empty()) return invalidArgument(verb + " function: name the function (as 'status' lists it)");
  std::set<std::string> known;
  sessions_.inspect(session, [&](const TaskGraph& graph) {
    for (const std::string& name : graph.functions())
      if (!name.empty()) known.insert(name);
  });
  // What is blocked can be unblocked, named as it was.
  for (const std::string& name : hub_.state(session).blocked_functions) known.insert(name);
  auto names = matchFunction(known, block.function(), verb);
  if (!names) return names.error();
  std::vector<v1::TaskControl> controls;
  for (const std::string& name : *names) {
    v1::TaskControl& control = controls.emplace_back();
    v1::FunctionBlock* out = control.mutable_block_function();
    out->set_function(name);
    out->set_blocked(block.blocked());
    sessions_.inspect(session, [&](const TaskGraph& graph) {
      for (uint64_t task : TaskGraphSummary::notStarted(graph, name)) out->add_task_ids(task);
    });
  }
  return controls;
}

Result<v1::TaskControl> DebugCommandPolicy::priority(uint64_t session, const v1::TaskPriority& priority) const {
  std::string problem = taskProblem(session, priority.task_id(), true);
  if (!problem.empty()) return failedPrecondition("priority: " + problem + "; nothing changed");
  v1::TaskControl control;
  *control.mutable_priority() = priority;
  return control;
}

Result<v1::TaskControl> DebugCommandPolicy::pauseOn(const v1::PauseOn& pause) {
  if (pause.event() == v1::PAUSE_EVENT_UNSPECIFIED)
    return invalidArgument("pause: name the event (task_start, task_end, taskwait, barrier)");
  v1::TaskControl control;
  *control.mutable_pause_on() = pause;
  return control;
}

Result<v1::TaskControl> DebugCommandPolicy::threads(uint32_t threads) {
  if (threads == 0) return invalidArgument("threads: the number of threads must be at least 1");
  v1::TaskControl control;
  control.set_threads(threads);
  return control;
}

Result<v1::TaskControl> DebugCommandPolicy::gdb(const Caller& caller, const v1::Gdb& gdb) const {
  pid_t tracer = gdb.tracer_pid();
  if (tracer <= 0) return invalidArgument("gdb: give the pid of the gdb that will attach (tracer_pid)");
  // Only the caller's own gdb may be let in: a tracer of another user would
  // get at the program's memory.
  std::optional<uid_t> owner = ProcStat::owner(proc_root_, tracer);
  if (!owner) return notFound("gdb: no process " + std::to_string(tracer));
  if (*owner != caller.uid && !caller.admin)
    return permissionDenied("gdb: process " + std::to_string(tracer) + " is not yours");
  v1::TaskControl control;
  control.set_allow_tracer(tracer);
  return control;
}

std::string DebugCommandPolicy::taskProblem(uint64_t session, uint64_t task, bool must_not_have_started) const {
  std::string problem;
  sessions_.inspect(session, [&](const TaskGraph& graph) {
    const TaskGraph::Task* t = graph.find(task);
    if (!t && graph.wasDropped(task))
      // Past the graph's window only finished tasks are dropped.
      problem = "task " + std::to_string(task) + " has finished";
    else if (!t || !t->created)
      problem = "task " + std::to_string(task) + ": no such task in session " + std::to_string(session) +
                " (see 'status')";
    else if (t->state == TaskState::kFinished)
      problem = "task " + std::to_string(task) + " has finished";
    else if (must_not_have_started && t->state == TaskState::kRunning)
      problem = "task " + std::to_string(task) + " is already running";
  });
  return problem;
}

}  // namespace nk
