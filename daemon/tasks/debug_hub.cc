#include "tasks/debug_hub.h"

#include <utility>

namespace v1 = nodekeeper::v1;

namespace nk {

namespace {

int64_t sinceEpochNs(DebugHub::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

v1::DebugUpdate acknowledgement(uint64_t command_id, bool ok, std::string message) {
  v1::DebugUpdate update;
  update.set_command_id(command_id);
  update.mutable_ack()->set_ok(ok);
  update.mutable_ack()->set_message(std::move(message));
  return update;
}

}  // namespace

DebugHub::DebugHub(std::chrono::seconds default_grace, GraphCounts counts, std::function<Clock::time_point()> now)
    : default_grace_(default_grace), counts_(std::move(counts)), now_(std::move(now)) {}

void DebugHub::appConnected(uint64_t session, AppSink sink) {
  std::lock_guard lock(mutex_);
  Session& s = sessions_[session];
  s.app = std::move(sink);
  s.gate = GateState{};
}

void DebugHub::appGone(uint64_t session) {
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(session);
  if (found == sessions_.end()) return;
  Session& s = found->second;
  s.app = nullptr;
  s.gate = GateState{};  // nothing is held by a program that is gone
  s.holders.clear();
  s.lift_at.reset();
  for (auto it = pending_.begin(); it != pending_.end();) {
    auto f = frontends_.find(it->second.frontend);
    if (f != frontends_.end() && f->second.session == session) {
      // A command of several parts is answered once.
      if (!it->second.joint || std::exchange(it->second.joint->left, 0) != 0)
        f->second.sink(acknowledgement(it->second.command_id, false,
                                       "the program's stream ended before it answered"));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  broadcast(s, acknowledgement(0, true, "the program has ended (or left the daemon); nothing is held"));
  if (s.frontends.empty()) sessions_.erase(found);
}

void DebugHub::gateReports(uint64_t session, const google::protobuf::RepeatedPtrField<v1::GateReport>& reports) {
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(session);
  if (found == sessions_.end()) return;
  Session& s = found->second;
  for (const v1::GateReport& r : reports) {
    s.gate.held = r.held();
    s.gate.steps_left = r.steps_left();
    s.gate.parked_workers = r.parked_workers();
    s.gate.reported_ns = r.timestamp_ns();
    if (r.paused_on() != v1::PAUSE_EVENT_UNSPECIFIED) {
      // A pause's break is held by those who asked for pauses.
      for (uint64_t f : s.frontends)
        if (!frontends_[f].pauses.empty()) s.holders.insert(f);
    }
    if (!r.held() && r.ok()) s.holders.clear();
    auto pending = r.control_id() == 0 ? pending_.end() : pending_.find(r.control_id());
    if (pending == pending_.end()) {
      v1::DebugUpdate news = acknowledgement(0, r.ok(), r.message());
      news.mutable_ack()->set_effect_ns(r.timestamp_ns());
      fillState(s, news.mutable_status(), session);
      broadcast(s, news);
      continue;
    }
    v1::DebugUpdate ack = acknowledgement(pending->second.command_id, r.ok(), r.message());
    if (!joinPart(pending->second, r, ack)) {
      pending_.erase(pending);
      continue;
    }
    ack.mutable_ack()->set_latency_ns(r.timestamp_ns() - pending->second.arrived_monotonic_ns);
    ack.mutable_ack()->set_effect_ns(r.timestamp_ns());
    fillState(s, ack.mutable_status(), session);
    if (r.ok() && r.held() && r.message().rfind("break", 0) == 0) {
      uint64_t running = ack.status().running();
      ack.mutable_ack()->set_message("break: " + std::to_string(running) + (running == 1 ? " task" : " tasks") +
                                     " running, none will start; " + std::to_string(r.parked_workers()) +
                                     " worker(s) parked");
    }
    const std::string& message = ack.ack().message();
    auto f = frontends_.find(pending->second.frontend);
    // The others see what changed, as news.
    v1::DebugUpdate news = acknowledgement(0, r.ok(), "another frontend: " + message);
    *news.mutable_status() = ack.status();
    for (uint64_t other : s.frontends)
      if (other != pending->second.frontend) frontends_[other].sink(news);
    if (f != frontends_.end()) f->second.sink(ack);
    pending_.erase(pending);
  }
  // Held with nobody attached (a break at start whose frontend never came):
  // the same grace as a frontend that left.
  if (s.frontends.empty() && s.gate.held && !s.lift_at) {
    s.lift_at = now_() + default_grace_;
    s.lift_all = true;
  }
}

uint64_t DebugHub::attach(uint64_t session, FrontendSink sink, std::chrono::seconds grace) {
  std::lock_guard lock(mutex_);
  uint64_t id = next_frontend_++;
  frontends_[id] = Frontend{session, std::move(sink), grace.count() > 0 ? grace : default_grace_, {}};
  Session& s = sessions_[session];
  s.frontends.insert(id);
  s.lift_at.reset();  // a frontend is back: it decides
  return id;
}

void DebugHub::detach(uint64_t frontend) {
  std::lock_guard lock(mutex_);
  auto f = frontends_.find(frontend);
  if (f == frontends_.end()) return;
  uint64_t session = f->second.session;
  std::chrono::seconds grace = f->second.grace;
  frontends_.erase(f);
  for (auto it = pending_.begin(); it != pending_.end();)
    it = it->second.frontend == frontend ? pending_.erase(it) : std::next(it);
  auto found = sessions_.find(session);
  if (found == sessions_.end()) return;
  Session& s = found->second;
  s.frontends.erase(frontend);
  bool held_it = s.holders.erase(frontend) > 0;
  const GateState& g = s.gate;
  bool anything = g.held || !g.blocked.empty() || !g.blocked_functions.empty();
  if (s.frontends.empty() && s.app) {
    if (anything || held_it) {
      s.lift_at = now_() + grace;
      s.lift_all = true;
    }
  } else if (held_it && s.holders.empty()) {
    s.lift_at = now_() + grace;
    s.lift_all = false;
  }
  if (s.frontends.empty() && !s.app) sessions_.erase(found);
}

bool DebugHub::appConnected(uint64_t session) const {
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(session);
  return found != sessions_.end() && found->second.app;
}

void DebugHub::track(Session& s, uint64_t frontend, const v1::TaskControl& control) {
  switch (control.action_case()) {
    case v1::TaskControl::kHold:
      if (control.hold())
        s.holders.insert(frontend);
      else
        s.holders.clear();
      s.lift_at.reset();
      break;
    case v1::TaskControl::kStep:
      s.holders.insert(frontend);
      s.lift_at.reset();
      break;
    case v1::TaskControl::kPauseOn:
      if (control.pause_on().enabled())
        frontends_[frontend].pauses.insert(control.pause_on().event());
      else
        frontends_[frontend].pauses.erase(control.pause_on().event());
      break;
    case v1::TaskControl::kBlock:
      for (uint64_t task : control.block().task_ids()) {
        if (control.block().blocked())
          s.gate.blocked.insert(task);
        else
          s.gate.blocked.erase(task);
      }
      break;
    case v1::TaskControl::kBlockFunction:
      if (control.block_function().blocked())
        s.gate.blocked_functions.insert(control.block_function().function());
      else
        s.gate.blocked_functions.erase(control.block_function().function());
      break;
    case v1::TaskControl::kReleaseAll:
      s.holders.clear();
      s.gate.blocked.clear();
      s.gate.blocked_functions.clear();
      break;
    default: break;
  }
}

void DebugHub::send(uint64_t frontend, uint64_t command_id, v1::TaskControl control) {
  std::lock_guard lock(mutex_);
  auto f = frontends_.find(frontend);
  if (f == frontends_.end()) return;
  Session& s = sessions_[f->second.session];
  if (!s.app) {
    f->second.sink(acknowledgement(command_id, false, "task session " + std::to_string(f->second.session) +
                                                          ": its program is not running; nothing to control"));
    return;
  }
  uint64_t id = next_control_++;
  control.set_control_id(id);
  Clock::time_point now = now_();
  pending_[id] = Pending{frontend, command_id, now, sinceEpochNs(now)};
  if (!s.app(control)) {
    pending_.erase(id);
    f->second.sink(acknowledgement(command_id, false, "the program's stream is gone; nothing changed"));
    return;
  }
  track(s, frontend, control);
}

void DebugHub::send(uint64_t frontend, uint64_t command_id, std::vector<v1::TaskControl> controls) {
  if (controls.size() == 1) return send(frontend, command_id, std::move(controls.front()));
  std::lock_guard lock(mutex_);
  auto f = frontends_.find(frontend);
  if (f == frontends_.end()) return;
  Session& s = sessions_[f->second.session];
  if (!s.app || controls.empty()) {
    f->second.sink(acknowledgement(command_id, false, "task session " + std::to_string(f->second.session) +
                                                          ": its program is not running; nothing to control"));
    return;
  }
  auto joint = std::make_shared<Joint>(Joint{controls.size(), true, {}});
  Clock::time_point now = now_();
  for (v1::TaskControl& control : controls) {
    uint64_t id = next_control_++;
    control.set_control_id(id);
    pending_[id] = Pending{frontend, command_id, now, sinceEpochNs(now), joint};
    if (!s.app(control)) {
      for (auto it = pending_.begin(); it != pending_.end();)
        it = it->second.joint == joint ? pending_.erase(it) : std::next(it);
      f->second.sink(acknowledgement(command_id, false, "the program's stream is gone; nothing changed"));
      return;
    }
    track(s, frontend, control);
  }
}

bool DebugHub::joinPart(const Pending& pending, const v1::GateReport& report, v1::DebugUpdate& ack) {
  Joint* joint = pending.joint.get();
  if (!joint) return true;
  joint->ok = joint->ok && report.ok();
  joint->message += (joint->message.empty() ? "" : "; ") + report.message();
  if (--joint->left > 0) return false;
  ack.mutable_ack()->set_ok(joint->ok);
  ack.mutable_ack()->set_message(joint->message);
  return true;
}

void DebugHub::answer(uint64_t frontend, v1::DebugUpdate update) {
  std::lock_guard lock(mutex_);
  auto f = frontends_.find(frontend);
  if (f == frontends_.end()) return;
  auto s = sessions_.find(f->second.session);
  if (s != sessions_.end() && update.has_status()) fillState(s->second, update.mutable_status(), f->second.session);
  f->second.sink(update);
}

DebugHub::GateState DebugHub::state(uint64_t session) const {
  std::lock_guard lock(mutex_);
  auto found = sessions_.find(session);
  if (found == sessions_.end()) return {};
  GateState g = found->second.gate;
  g.frontends = static_cast<uint32_t>(found->second.frontends.size());
  g.app = static_cast<bool>(found->second.app);
  return g;
}

void DebugHub::tick() {
  std::lock_guard lock(mutex_);
  Clock::time_point now = now_();
  for (auto& [id, s] : sessions_) {
    if (!s.lift_at || *s.lift_at > now) continue;
    s.lift_at.reset();
    if (!s.app) continue;
    v1::TaskControl control;
    control.set_control_id(next_control_++);
    if (s.lift_all) {
      control.set_release_all(true);
      s.gate.blocked.clear();
      s.gate.blocked_functions.clear();
    } else {
      control.set_hold(false);
    }
    s.holders.clear();
    s.app(control);
    broadcast(s, acknowledgement(0, true, s.lift_all ? "grace period over with no frontend: every control lifted"
                                                     : "grace period over: the break its frontend held is lifted"));
  }
}

void DebugHub::broadcast(const Session& s, const v1::DebugUpdate& update) const {
  for (uint64_t f : s.frontends) {
    auto it = frontends_.find(f);
    if (it != frontends_.end()) it->second.sink(update);
  }
}

void DebugHub::fillState(const Session& s, v1::DebugStatus* status, uint64_t session_id) const {
  status->set_session_id(session_id);
  status->set_live(static_cast<bool>(s.app));
  status->set_held(s.gate.held);
  status->set_steps_left(s.gate.steps_left);
  status->set_parked_workers(s.gate.parked_workers);
  status->set_gate_reported_ns(s.gate.reported_ns);
  status->clear_blocked();
  for (uint64_t t : s.gate.blocked) status->add_blocked(t);
  status->clear_blocked_functions();
  for (const std::string& f : s.gate.blocked_functions) status->add_blocked_functions(f);
  status->set_frontends(static_cast<uint32_t>(s.frontends.size()));
  if (counts_) counts_(session_id, status);
}

}  // namespace nk
