#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "tasks/debug_hub.h"
#include "tasks/session_registry.h"

namespace nk {

// The debugger's rules for a task session: who may watch or steer it, and
// which commands of an attached frontend are allowed. An allowed command
// becomes a TaskControl sent to the app through the hub (which acknowledges
// it when the app reports); `status` is answered here; anything else is
// refused with a message that says why and what to do instead. A command
// naming tasks is checked against the session's graph, so a frontend is
// told at once about a task the daemon has not seen or that has finished.
//
// No gRPC here: the Debug and Watch streams hand in the caller and the
// decoded command, and the hub's sinks carry the answers.
class DebugCommandPolicy {
 public:
  // Who sends the command: its uid (SO_PEERCRED) and whether the access
  // policy makes it an admin.
  struct Caller {
    uid_t uid = static_cast<uid_t>(-1);
    bool admin = false;
  };

  // `proc_root`: procfs, where a gdb's owner is looked up.
  DebugCommandPolicy(const SessionRegistry& sessions, DebugHub& hub, std::filesystem::path proc_root = "/proc");

  // The session, if the caller may `verb` (watch, debug) it: its owner or
  // an admin.
  Result<SessionRegistry::Info> sessionFor(const Caller& caller, uint64_t session, std::string_view verb) const;

  // Acknowledges a frontend's attach: the session's status, whether it is
  // live and how many frontends it has.
  void greet(uint64_t frontend, const SessionRegistry::Info& session, uint64_t command_id) const;

  // One command of a frontend attached to `session`.
  void handle(uint64_t frontend, uint64_t session, const Caller& caller,
              const nodekeeper::v1::DebugCommand& command) const;

  // The task side of the hub's statuses (DebugStatusView): tasks per
  // state, per function, the ready tasks and the stall line; the registry
  // keeps the counts of ended sessions, whose graphs are freed.
  static DebugHub::GraphCounts taskCounts(const SessionRegistry& sessions);
  // An acknowledgement that nothing took effect, and why (command_id 0:
  // news, not the answer to a command).
  static nodekeeper::v1::DebugUpdate refusal(uint64_t command_id, std::string message);

 private:
  nodekeeper::v1::DebugUpdate statusOf(uint64_t session, uint64_t command_id) const;
  // The control an allowed command sends the app, or why it is refused.
  Result<nodekeeper::v1::TaskControl> controlFor(uint64_t session, const Caller& caller,
                                                 const nodekeeper::v1::DebugCommand& command) const;
  static Result<nodekeeper::v1::TaskControl> step(const nodekeeper::v1::Step& step);
  Result<nodekeeper::v1::TaskControl> block(uint64_t session, const nodekeeper::v1::TaskBlock& block) const;
  // The typed name may be a construct's full name, its function's, or a
  // prefix of one function's names: one control per name it stands for.
  Result<std::vector<nodekeeper::v1::TaskControl>> blockFunction(uint64_t session,
                                                                 const nodekeeper::v1::FunctionBlock& block) const;
  Result<nodekeeper::v1::TaskControl> priority(uint64_t session, const nodekeeper::v1::TaskPriority& priority) const;
  static Result<nodekeeper::v1::TaskControl> pauseOn(const nodekeeper::v1::PauseOn& pause);
  static Result<nodekeeper::v1::TaskControl> threads(uint32_t threads);
  Result<nodekeeper::v1::TaskControl> gdb(const Caller& caller, const nodekeeper::v1::Gdb& gdb) const;
  // Why a task a command names cannot take it ("" if it can): the daemon
  // must have seen it created, and it must not have finished (nor, with
  // `must_not_have_started`, be running).
  std::string taskProblem(uint64_t session, uint64_t task, bool must_not_have_started) const;

  const SessionRegistry& sessions_;
  DebugHub& hub_;
  std::filesystem::path proc_root_;
};

}  // namespace nk
