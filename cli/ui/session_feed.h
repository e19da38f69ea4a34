#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "cli/debug_client.h"
#include "cli/ui/event_queue.h"
#include "cli/ui/graph_delta.h"
#include "cli/ui/run_collector.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_event_translator.h"
#include "taskgraph/task_graph.h"
#include "taskgraph/task_run_tracker.h"

namespace nk::ui {

// One session as `nodekeeper ui` serves it: one Debug stream to the daemon
// (with the user's own identity, so the daemon decides what the user may
// see and do), the session's graph and task runs built from its events,
// and the SSE frames every browser tab on the session reads: `graph` and
// `runs` batched at most every 100 ms, `status` after each change, `news`,
// then `end` when the session ends. A live session's events come on the
// Debug stream; an ended one's recording is read once through
// TasksService.Watch, as `nodekeeper debug` replays it.
class SessionFeed {
 public:
  struct Where {
    std::string socket_path;
    std::chrono::milliseconds timeout{5000};
  };

  // Attaches; the daemon's refusal (another user's session: permission
  // denied; none such: not found) comes back as the error.
  static Result<std::unique_ptr<SessionFeed>> open(const Where& where, uint64_t session, bool live);
  SessionFeed(const Where& where, uint64_t session);  // open() attaches
  ~SessionFeed();
  SessionFeed(const SessionFeed&) = delete;
  SessionFeed& operator=(const SessionFeed&) = delete;

  struct Subscription {
    std::string first;  // the session so far: graph, runs, status (and end)
    uint64_t reader = 0;
  };
  // A new reader of queue(), with what it must be sent first.
  Subscription subscribe();
  EventQueue& queue() { return queue_; }
  // One command's acknowledgement (its status goes to the subscribers).
  Result<nodekeeper::v1::DebugUpdate> command(nodekeeper::v1::DebugCommand command);
  // Stops following; subscribers get what is queued, then the end.
  void close();
  bool ended() const;
  // Ended because the Debug stream broke (the daemon restarted): a new
  // request for the session should attach afresh.
  bool broken() const;

 private:
  void onBatch(const nodekeeper::v1::TaskEventBatch& batch);
  void onNews(const nodekeeper::v1::DebugUpdate& update);
  void noteStatus(const nodekeeper::v1::DebugStatus& status);  // mutex_ held
  void flushLoop();
  void flush();  // mutex_ held
  void finish(const std::string& reason);  // mutex_ held
  void fail();  // mutex_ held, after an `error` frame
  void readRecording();

  Where where_;
  uint64_t session_;
  EventQueue queue_;
  std::unique_ptr<cli::DebugClient> client_;
  std::thread flusher_;
  std::thread recording_reader_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mutex_;
  TaskGraph graph_;
  TaskEventTranslator translator_;
  std::vector<GraphEvent> events_;  // scratch
  nodekeeper::v1::TaskEventBatch structured_;  // scratch
  GraphDelta delta_;
  RunCollector runs_;
  TaskRunTracker tracker_{runs_};
  std::optional<nodekeeper::v1::DebugStatus> status_;
  bool status_changed_ = false;
  std::deque<nlohmann::json> news_;
  bool status_stale_ = false;  // news came without a status: ask for one
  bool live_ = true;
  // A live session whose program has gone: its last events may still be
  // on their way; `end` follows once they stopped coming.
  bool program_gone_ = false;
  std::chrono::steady_clock::time_point gone_at_{}, last_batch_at_{};
  uint64_t graph_events_received_ = 0;  // as the daemon counts a session's events
  std::chrono::steady_clock::time_point last_count_check_{};  // the flusher's own
  bool recording_read_ = false;
  bool ended_ = false;
  bool broken_ = false;
  std::string end_reason_;
};

}  // namespace nk::ui
