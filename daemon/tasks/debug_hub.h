#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"

namespace nk {

// Where debugger frontends meet the apps they steer. Each task session has
// at most one app stream (its Publish) and any number of frontends (their
// Debug streams). A command becomes a TaskControl to the app at once; the
// app's GateReport for it becomes the frontend's acknowledgement, with the
// time it took. Everything else the gate says (a worker parked, a pause
// hit, a step used up) goes to every frontend of the session.
//
// Who holds a break: the frontends that asked for it (break, step, a pause
// they set). When the last of them leaves, the break lifts after its grace
// period unless another holds it; when the last frontend of all leaves,
// after the grace, every control lifts (a blocked task with nobody to
// unblock it would hold the program forever).
//
// No gRPC here: the services hand in sinks (writes to their streams), so
// unit tests drive the hub with plain functions and a clock they move.
// Sinks are called under the hub's lock, one at a time: an app's stream
// never has two writers, and after appGone() or detach() its sink is not
// called again.
class DebugHub {
 public:
  using Clock = std::chrono::steady_clock;
  using AppSink = std::function<bool(const nodekeeper::v1::TaskControl&)>;
  using FrontendSink = std::function<void(const nodekeeper::v1::DebugUpdate&)>;
  // Adds the session's task counts (from its graph) to a status.
  using GraphCounts = std::function<void(uint64_t session, nodekeeper::v1::DebugStatus*)>;

  explicit DebugHub(std::chrono::seconds default_grace, GraphCounts counts = {},
                    std::function<Clock::time_point()> now = &Clock::now);

  // The app's Publish stream.
  void appConnected(uint64_t session, AppSink sink);
  void appGone(uint64_t session);
  void gateReports(uint64_t session, const google::protobuf::RepeatedPtrField<nodekeeper::v1::GateReport>& reports);

  // A frontend; its id for the calls below. grace 0: the default.
  uint64_t attach(uint64_t session, FrontendSink sink, std::chrono::seconds grace);
  void detach(uint64_t frontend);
  bool appConnected(uint64_t session) const;
  // Sends `control` to the frontend's app on behalf of its command; the
  // acknowledgement follows when the app reports. Without an app the
  // command is acknowledged at once as refused.
  void send(uint64_t frontend, uint64_t command_id, nodekeeper::v1::TaskControl control);
  // A command that takes several controls (a function block for each name
  // it stands for): acknowledged once, when the app has reported them all
  // (ok if every one was, their messages joined).
  void send(uint64_t frontend, uint64_t command_id, std::vector<nodekeeper::v1::TaskControl> controls);
  // Acknowledges a command the service answered itself (bad input, status).
  void answer(uint64_t frontend, nodekeeper::v1::DebugUpdate update);

  // The gate as the app last reported it, and the hub's own bookkeeping.
  struct GateState {
    bool held = false;
    uint32_t steps_left = 0;
    uint32_t parked_workers = 0;
    int64_t reported_ns = 0;  // the app's last report (CLOCK_MONOTONIC)
    std::set<uint64_t> blocked;
    std::set<std::string> blocked_functions;
    uint32_t frontends = 0;
    bool app = false;
  };
  GateState state(uint64_t session) const;

  // Grace periods that ran out lift their break (the service calls this
  // from a timer).
  void tick();

 private:
  struct Frontend {
    uint64_t session = 0;
    FrontendSink sink;
    std::chrono::seconds grace{0};
    std::set<int> pauses;  // the PauseEvents it enabled
  };
  // The parts of one command sent as several controls.
  struct Joint {
    size_t left = 0;
    bool ok = true;
    std::string message;
  };
  struct Pending {
    uint64_t frontend = 0;
    uint64_t command_id = 0;
    Clock::time_point arrived;
    int64_t arrived_monotonic_ns = 0;
    std::shared_ptr<Joint> joint;  // null: the command's only control
  };
  struct Session {
    AppSink app;
    std::set<uint64_t> frontends;
    std::set<uint64_t> holders;  // frontends holding the break
    std::optional<Clock::time_point> lift_at;
    bool lift_all = false;       // at lift_at: everything, not only the break
    GateState gate;
  };

  void broadcast(const Session& session, const nodekeeper::v1::DebugUpdate& update) const;
  void fillState(const Session& session, nodekeeper::v1::DebugStatus* status, uint64_t session_id) const;
  void track(Session& session, uint64_t frontend, const nodekeeper::v1::TaskControl& control);
  // A part's report: false while others are still to come; the last one
  // makes `ack` the whole command's.
  static bool joinPart(const Pending& pending, const nodekeeper::v1::GateReport& report,
                       nodekeeper::v1::DebugUpdate& ack);

  const std::chrono::seconds default_grace_;
  GraphCounts counts_;
  std::function<Clock::time_point()> now_;
  mutable std::mutex mutex_;
  std::map<uint64_t, Session> sessions_;
  std::map<uint64_t, Frontend> frontends_;
  std::map<uint64_t, Pending> pending_;  // by control id
  uint64_t next_frontend_ = 1;
  uint64_t next_control_ = 1;
};

}  // namespace nk
