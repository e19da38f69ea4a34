#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "nodekeeper/v1/tasks.pb.h"
#include "tasks/session_registry.h"
#include "tasks/task_readiness.h"

namespace nk {

// The task side of every DebugStatus the hub sends (answers to `status`,
// acknowledgements, news): tasks by state (queued as TaskReadiness reads
// the graph), per function, the ready tasks, the lists cut at kMaxListed
// with their totals, and the stall line (WorkerStall). The gate's part
// (held, parked workers, blocked) must be filled in first: the stall line
// reads it.
//
// Keeps one TaskReadiness per live session it was asked about, so a
// status costs what the graph changed since the last one plus its
// unfinished tasks, not a walk of every task and edge; a session's is
// dropped once the session has ended.
class DebugStatusView {
 public:
  // The most task ids a status lists (ready, blocked).
  static constexpr size_t kMaxListed = 64;

  explicit DebugStatusView(const SessionRegistry& sessions);

  void fill(uint64_t session, nodekeeper::v1::DebugStatus* status);

  // Whether `function` (a graph's name) is held by `blocked` (the names
  // 'block function' was given).
  static bool functionBlocked(std::string_view function, const std::set<std::string>& blocked);

 private:
  void fillLive(const TaskGraph& graph, TaskReadiness& readiness, nodekeeper::v1::DebugStatus* status);
  static void cutBlockedList(nodekeeper::v1::DebugStatus* status);
  void forgetEnded(uint64_t asked);

  const SessionRegistry& sessions_;
  std::mutex mutex_;
  std::map<uint64_t, TaskReadiness> readiness_;
};

}  // namespace nk
