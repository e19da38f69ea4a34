#include "tasks/debug_hub.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace nk {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr std::chrono::seconds kDefaultGrace = 30s;

// A frontend's stream: what the hub wrote to it.
struct FrontendLog {
  std::vector<v1::DebugUpdate> updates;
  std::vector<v1::DebugUpdate> acks(uint64_t command_id) const {
    std::vector<v1::DebugUpdate> out;
    for (const auto& u : updates)
      if (u.command_id() == command_id) out.push_back(u);
    return out;
  }
  std::vector<v1::DebugUpdate> news() const { return acks(0); }
};

// An app's Publish stream: the controls the hub sent it.
struct AppLog {
  std::vector<v1::TaskControl> controls;
  bool accept = true;  // false: the stream is broken
};

class DebugHubTest : public ::testing::Test {
 protected:
  DebugHubTest()
      : hub_(kDefaultGrace,
             [this](uint64_t session, v1::DebugStatus* status) {
               counted_sessions_.push_back(session);
               auto c = counts_.find(session);
               if (c == counts_.end()) return;
               status->set_not_queued(c->second[0]);
               status->set_queued(c->second[1]);
               status->set_running(c->second[2]);
               status->set_finished(c->second[3]);
             },
             [this] { return now_; }) {}

  void connectApp(uint64_t session) {
    AppLog& log = apps_[session];
    log.controls.clear();
    hub_.appConnected(session, [&log](const v1::TaskControl& c) {
      if (!log.accept) return false;
      log.controls.push_back(c);
      return true;
    });
  }

  uint64_t attach(uint64_t session, const std::string& name, std::chrono::seconds grace = 0s) {
    FrontendLog& log = frontends_[name];
    return hub_.attach(session, [&log](const v1::DebugUpdate& u) { log.updates.push_back(u); }, grace);
  }

  static v1::TaskControl hold(bool on) {
    v1::TaskControl c;
    c.set_hold(on);
    return c;
  }
  static v1::TaskControl pauseOn(v1::PauseEvent event, bool enabled = true) {
    v1::TaskControl c;
    c.mutable_pause_on()->set_event(event);
    c.mutable_pause_on()->set_enabled(enabled);
    return c;
  }
  static v1::TaskControl block(std::vector<uint64_t> tasks, bool blocked = true) {
    v1::TaskControl c;
    for (uint64_t t : tasks) c.mutable_block()->add_task_ids(t);
    c.mutable_block()->set_blocked(blocked);
    return c;
  }
  static v1::TaskControl blockFunction(const std::string& name, bool blocked = true) {
    v1::TaskControl c;
    c.mutable_block_function()->set_function(name);
    c.mutable_block_function()->set_blocked(blocked);
    return c;
  }

  struct Report {
    uint64_t control_id = 0;
    bool ok = true;
    std::string message;
    bool held = false;
    uint32_t parked = 0;
    uint32_t steps_left = 0;
    int64_t timestamp_ns = 0;
    v1::PauseEvent paused_on = v1::PAUSE_EVENT_UNSPECIFIED;
  };
  void report(uint64_t session, const Report& r) {
    google::protobuf::RepeatedPtrField<v1::GateReport> reports;
    v1::GateReport* g = reports.Add();
    g->set_control_id(r.control_id);
    g->set_ok(r.ok);
    g->set_message(r.message);
    g->set_held(r.held);
    g->set_parked_workers(r.parked);
    g->set_steps_left(r.steps_left);
    g->set_timestamp_ns(r.timestamp_ns);
    g->set_paused_on(r.paused_on);
    hub_.gateReports(session, reports);
  }

  // The id the hub gave the last control it sent to the session's app.
  uint64_t lastControlId(uint64_t session) {
    const auto& controls = apps_[session].controls;
    EXPECT_FALSE(controls.empty());
    return controls.empty() ? 0 : controls.back().control_id();
  }

  // A frontend breaks and the app acknowledges it.
  void breakAcknowledged(uint64_t session, uint64_t frontend, uint64_t command_id) {
    hub_.send(frontend, command_id, hold(true));
    report(session, {.control_id = lastControlId(session), .message = "break: no task will start", .held = true});
  }

  int64_t nowNs() const { return std::chrono::duration_cast<std::chrono::nanoseconds>(now_.time_since_epoch()).count(); }

  DebugHub::Clock::time_point now_ = DebugHub::Clock::time_point{} + 1000s;
  std::map<uint64_t, std::array<uint64_t, 4>> counts_;  // not queued, queued, running, finished
  std::vector<uint64_t> counted_sessions_;
  std::map<uint64_t, AppLog> apps_;
  std::map<std::string, FrontendLog> frontends_;
  DebugHub hub_;
};

// ---- commands and acknowledgements -------------------------------------

TEST_F(DebugHubTest, CommandBecomesControlWithFreshId) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  v1::TaskControl c = hold(true);
  c.set_control_id(999);  // the hub chooses the id
  hub_.send(a, 7, c);
  hub_.send(a, 8, block({5, 6}));
  const auto& sent = apps_[1].controls;
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].action_case(), v1::TaskControl::kHold);
  EXPECT_TRUE(sent[0].hold());
  EXPECT_NE(sent[0].control_id(), 0u);
  EXPECT_NE(sent[0].control_id(), 999u);
  EXPECT_EQ(sent[1].action_case(), v1::TaskControl::kBlock);
  EXPECT_NE(sent[1].control_id(), 0u);
  EXPECT_NE(sent[1].control_id(), sent[0].control_id());
  // No acknowledgement before the app reports.
  EXPECT_TRUE(frontends_["a"].updates.empty());
}

TEST_F(DebugHubTest, ControlIdsAreFreshAcrossSessions) {
  connectApp(1);
  connectApp(2);
  uint64_t a = attach(1, "a");
  uint64_t b = attach(2, "b");
  hub_.send(a, 1, hold(true));
  hub_.send(b, 1, hold(true));
  ASSERT_EQ(apps_[1].controls.size(), 1u);
  ASSERT_EQ(apps_[2].controls.size(), 1u);
  EXPECT_NE(apps_[1].controls[0].control_id(), apps_[2].controls[0].control_id());
}

TEST_F(DebugHubTest, ReportBecomesAcknowledgementWithLatencyAndStatus) {
  counts_[1] = {4, 3, 2, 1};
  connectApp(1);
  uint64_t a = attach(1, "a");
  int64_t arrival = nowNs();
  v1::TaskControl step;
  step.set_step(3);
  hub_.send(a, 42, step);
  now_ += 5ms;  // the hub's clock does not decide the latency: the report's timestamp does
  report(1, {.control_id = lastControlId(1),
             .message = "step 3: that many tasks may start, then break",
             .held = true,
             .parked = 2,
             .steps_left = 3,
             .timestamp_ns = arrival + 1234});

  auto acks = frontends_["a"].acks(42);
  ASSERT_EQ(acks.size(), 1u);
  ASSERT_EQ(frontends_["a"].updates.size(), 1u);  // no news to the sender
  const v1::DebugUpdate& ack = acks[0];
  EXPECT_TRUE(ack.ack().ok());
  EXPECT_EQ(ack.ack().message(), "step 3: that many tasks may start, then break");
  EXPECT_EQ(ack.ack().latency_ns(), 1234);
  ASSERT_TRUE(ack.has_status());
  EXPECT_EQ(ack.status().session_id(), 1u);
  EXPECT_TRUE(ack.status().live());
  EXPECT_TRUE(ack.status().held());
  EXPECT_EQ(ack.status().steps_left(), 3u);
  EXPECT_EQ(ack.status().parked_workers(), 2u);
  EXPECT_EQ(ack.status().frontends(), 1u);
  // From the GraphCounts callback, for this session.
  EXPECT_EQ(ack.status().not_queued(), 4u);
  EXPECT_EQ(ack.status().queued(), 3u);
  EXPECT_EQ(ack.status().running(), 2u);
  EXPECT_EQ(ack.status().finished(), 1u);
  ASSERT_FALSE(counted_sessions_.empty());
  EXPECT_EQ(counted_sessions_.back(), 1u);

  // The hub's state follows the report.
  DebugHub::GateState g = hub_.state(1);
  EXPECT_TRUE(g.held);
  EXPECT_EQ(g.steps_left, 3u);
  EXPECT_EQ(g.parked_workers, 2u);
  EXPECT_EQ(g.frontends, 1u);
  EXPECT_TRUE(g.app);
}

TEST_F(DebugHubTest, StatusListsBlockedTasksAndFunctions) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  hub_.send(a, 1, block({9, 3}));
  hub_.send(a, 2, blockFunction("f"));
  hub_.send(a, 3, blockFunction("g"));
  hub_.send(a, 4, block({9}, false));
  hub_.send(a, 5, blockFunction("g", false));
  report(1, {.control_id = lastControlId(1), .message = "function g unblocked"});
  auto acks = frontends_["a"].acks(5);
  ASSERT_EQ(acks.size(), 1u);
  const v1::DebugStatus& s = acks[0].status();
  EXPECT_EQ(std::vector<uint64_t>(s.blocked().begin(), s.blocked().end()), (std::vector<uint64_t>{3}));
  EXPECT_EQ(std::vector<std::string>(s.blocked_functions().begin(), s.blocked_functions().end()),
            (std::vector<std::string>{"f"}));
  DebugHub::GateState g = hub_.state(1);
  EXPECT_EQ(g.blocked, (std::set<uint64_t>{3}));
  EXPECT_EQ(g.blocked_functions, (std::set<std::string>{"f"}));
}

TEST_F(DebugHubTest, RefusalFromTheAppIsPassedOn) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  v1::TaskControl step;
  step.set_step(0);
  hub_.send(a, 3, step);
  report(1, {.control_id = lastControlId(1), .ok = false, .message = "step: the number of tasks must be at least 1"});
  auto acks = frontends_["a"].acks(3);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_FALSE(acks[0].ack().ok());
  EXPECT_EQ(acks[0].ack().message(), "step: the number of tasks must be at least 1");
}

TEST_F(DebugHubTest, AcknowledgementIsSentOnce) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  hub_.send(a, 5, hold(false));
  uint64_t id = lastControlId(1);
  report(1, {.control_id = id, .message = "continue: tasks may start"});
  // The same id again (a confused app) is news, not a second acknowledgement.
  report(1, {.control_id = id, .message = "continue: tasks may start"});
  EXPECT_EQ(frontends_["a"].acks(5).size(), 1u);
  EXPECT_EQ(frontends_["a"].news().size(), 1u);
}

TEST_F(DebugHubTest, BreakAcknowledgementNamesRunningTasksAndParkedWorkers) {
  counts_[1] = {0, 0, 2, 0};
  connectApp(1);
  uint64_t a = attach(1, "a");
  hub_.send(a, 1, hold(true));
  report(1, {.control_id = lastControlId(1), .message = "break: no task will start", .held = true, .parked = 3});
  auto acks = frontends_["a"].acks(1);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].ack().message(), "break: 2 tasks running, none will start; 3 worker(s) parked");

  counts_[1] = {0, 0, 1, 0};
  hub_.send(a, 2, hold(true));
  report(1, {.control_id = lastControlId(1), .message = "break: no task will start", .held = true, .parked = 0});
  acks = frontends_["a"].acks(2);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].ack().message(), "break: 1 task running, none will start; 0 worker(s) parked");
}

TEST_F(DebugHubTest, OtherMessagesAreNotRewritten) {
  counts_[1] = {0, 0, 2, 0};
  connectApp(1);
  uint64_t a = attach(1, "a");
  // A refused break keeps the app's reason.
  hub_.send(a, 1, hold(true));
  report(1, {.control_id = lastControlId(1), .ok = false, .message = "break: refused", .held = true});
  EXPECT_EQ(frontends_["a"].acks(1).at(0).ack().message(), "break: refused");
  // A continue keeps the app's message.
  hub_.send(a, 2, hold(false));
  report(1, {.control_id = lastControlId(1), .message = "continue: tasks may start", .held = false});
  EXPECT_EQ(frontends_["a"].acks(2).at(0).ack().message(), "continue: tasks may start");
}

TEST_F(DebugHubTest, NewsGoesToEveryFrontendOfTheSession) {
  counts_[1] = {1, 2, 3, 4};
  connectApp(1);
  connectApp(2);
  attach(1, "a");
  attach(1, "b");
  attach(2, "other");
  report(1, {.message = "worker parked before task 17", .held = true, .parked = 1});
  for (const char* name : {"a", "b"}) {
    const auto& updates = frontends_[name].updates;
    ASSERT_EQ(updates.size(), 1u) << name;
    EXPECT_EQ(updates[0].command_id(), 0u) << name;
    EXPECT_TRUE(updates[0].ack().ok()) << name;
    EXPECT_EQ(updates[0].ack().message(), "worker parked before task 17") << name;
    EXPECT_EQ(updates[0].ack().latency_ns(), 0) << name;
    ASSERT_TRUE(updates[0].has_status()) << name;
    EXPECT_EQ(updates[0].status().session_id(), 1u) << name;
    EXPECT_TRUE(updates[0].status().held()) << name;
    EXPECT_EQ(updates[0].status().parked_workers(), 1u) << name;
    EXPECT_EQ(updates[0].status().frontends(), 2u) << name;
    EXPECT_EQ(updates[0].status().running(), 3u) << name;
  }
  EXPECT_TRUE(frontends_["other"].updates.empty());
}

TEST_F(DebugHubTest, OtherFrontendsGetTheCommandAsNews) {
  counts_[1] = {0, 0, 2, 0};
  connectApp(1);
  connectApp(2);
  uint64_t a = attach(1, "a");
  attach(1, "b");
  attach(1, "c");
  attach(2, "elsewhere");
  hub_.send(a, 11, hold(true));
  report(1, {.control_id = lastControlId(1), .message = "break: no task will start", .held = true, .parked = 1});

  ASSERT_EQ(frontends_["a"].updates.size(), 1u);
  EXPECT_EQ(frontends_["a"].updates[0].command_id(), 11u);
  const std::string expected = "break: 2 tasks running, none will start; 1 worker(s) parked";
  for (const char* name : {"b", "c"}) {
    const auto& updates = frontends_[name].updates;
    ASSERT_EQ(updates.size(), 1u) << name;
    EXPECT_EQ(updates[0].command_id(), 0u) << name;
    EXPECT_TRUE(updates[0].ack().ok()) << name;
    EXPECT_EQ(updates[0].ack().message(), "another frontend: " + expected) << name;
    EXPECT_TRUE(updates[0].status().held()) << name;
    EXPECT_EQ(updates[0].status().frontends(), 3u) << name;
  }
  EXPECT_TRUE(frontends_["elsewhere"].updates.empty());

  // A refusal is news too, with ok = false.
  hub_.send(a, 12, block({4}));
  report(1, {.control_id = lastControlId(1), .ok = false, .message = "block: no such task", .held = true});
  ASSERT_EQ(frontends_["b"].updates.size(), 2u);
  EXPECT_FALSE(frontends_["b"].updates[1].ack().ok());
  EXPECT_EQ(frontends_["b"].updates[1].ack().message(), "another frontend: block: no such task");
}

TEST_F(DebugHubTest, WithoutAnAppTheCommandIsRefusedAtOnce) {
  uint64_t a = attach(5, "a");
  EXPECT_FALSE(hub_.appConnected(5));
  hub_.send(a, 9, hold(true));
  auto acks = frontends_["a"].acks(9);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_FALSE(acks[0].ack().ok());
  EXPECT_NE(acks[0].ack().message().find("task session 5"), std::string::npos) << acks[0].ack().message();
  EXPECT_NE(acks[0].ack().message().find("not running"), std::string::npos) << acks[0].ack().message();
  EXPECT_TRUE(apps_[5].controls.empty());
  // Nothing was recorded as held: the frontend leaving lifts nothing later.
  connectApp(5);
  hub_.detach(a);
  now_ += 1h;
  hub_.tick();
  EXPECT_TRUE(apps_[5].controls.empty());
}

TEST_F(DebugHubTest, BrokenAppStreamRefusesTheCommand) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  apps_[1].accept = false;
  hub_.send(a, 4, hold(true));
  auto acks = frontends_["a"].acks(4);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_FALSE(acks[0].ack().ok());
  EXPECT_NE(acks[0].ack().message().find("stream is gone"), std::string::npos) << acks[0].ack().message();
}

TEST_F(DebugHubTest, AppConnectedAndState) {
  EXPECT_FALSE(hub_.appConnected(1));
  DebugHub::GateState none = hub_.state(1);
  EXPECT_FALSE(none.app);
  EXPECT_EQ(none.frontends, 0u);
  connectApp(1);
  EXPECT_TRUE(hub_.appConnected(1));
  EXPECT_FALSE(hub_.appConnected(2));
  attach(1, "a");
  attach(1, "b");
  DebugHub::GateState g = hub_.state(1);
  EXPECT_TRUE(g.app);
  EXPECT_EQ(g.frontends, 2u);
  EXPECT_FALSE(g.held);
}

TEST_F(DebugHubTest, AnswerFillsTheStatusWhenItHasOne) {
  counts_[1] = {7, 0, 0, 0};
  connectApp(1);
  uint64_t a = attach(1, "a");
  v1::DebugUpdate with;
  with.set_command_id(3);
  with.mutable_ack()->set_ok(true);
  with.mutable_status()->add_ready(12);
  hub_.answer(a, with);
  v1::DebugUpdate without;
  without.set_command_id(4);
  without.mutable_ack()->set_ok(false);
  without.mutable_ack()->set_message("bad input");
  hub_.answer(a, without);
  hub_.answer(a + 100, without);  // unknown frontend: ignored

  const auto& updates = frontends_["a"].updates;
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_EQ(updates[0].command_id(), 3u);
  EXPECT_EQ(updates[0].status().session_id(), 1u);
  EXPECT_TRUE(updates[0].status().live());
  EXPECT_EQ(updates[0].status().frontends(), 1u);
  EXPECT_EQ(updates[0].status().not_queued(), 7u);
  EXPECT_EQ(updates[0].status().ready_size(), 1);  // kept what the service put there
  EXPECT_EQ(updates[1].command_id(), 4u);
  EXPECT_FALSE(updates[1].has_status());
  EXPECT_EQ(updates[1].ack().message(), "bad input");
}

// ---- the app leaving ----------------------------------------------------

TEST_F(DebugHubTest, AppGoneRefusesPendingCommandsAndTellsFrontends) {
  connectApp(1);
  connectApp(2);
  uint64_t a = attach(1, "a");
  uint64_t b = attach(1, "b");
  uint64_t c = attach(2, "c");
  hub_.send(a, 21, hold(true));
  hub_.send(b, 22, block({3}));
  hub_.send(c, 23, hold(true));
  uint64_t session2_control = lastControlId(2);
  hub_.appGone(1);

  for (auto [name, command] : {std::pair{"a", 21u}, std::pair{"b", 22u}}) {
    auto acks = frontends_[name].acks(command);
    ASSERT_EQ(acks.size(), 1u) << name;
    EXPECT_FALSE(acks[0].ack().ok()) << name;
    EXPECT_NE(acks[0].ack().message().find("ended before it answered"), std::string::npos) << name;
    auto news = frontends_[name].news();
    ASSERT_EQ(news.size(), 1u) << name;
    EXPECT_NE(news[0].ack().message().find("the program has ended"), std::string::npos) << name;
  }
  EXPECT_FALSE(hub_.appConnected(1));
  EXPECT_FALSE(hub_.state(1).app);
  EXPECT_EQ(hub_.state(1).frontends, 2u);

  // The other session is untouched: its command is still pending.
  EXPECT_TRUE(frontends_["c"].updates.empty());
  EXPECT_TRUE(hub_.appConnected(2));
  report(2, {.control_id = session2_control, .message = "break: no task will start", .held = true});
  EXPECT_EQ(frontends_["c"].acks(23).size(), 1u);

  // Later commands in session 1 are refused at once.
  hub_.send(a, 24, hold(false));
  auto later = frontends_["a"].acks(24);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_FALSE(later[0].ack().ok());
}

TEST_F(DebugHubTest, AppGoneWithoutFrontendsForgetsTheSession) {
  connectApp(1);
  report(1, {.message = "worker parked before task 1", .held = true, .parked = 1});
  hub_.appGone(1);
  EXPECT_FALSE(hub_.appConnected(1));
  DebugHub::GateState g = hub_.state(1);
  EXPECT_EQ(g.frontends, 0u);
  EXPECT_FALSE(g.held);  // forgotten, not kept with its last report
  EXPECT_EQ(g.parked_workers, 0u);
  hub_.appGone(1);  // twice: nothing happens
  hub_.appGone(77);  // unknown session: nothing happens
}

TEST_F(DebugHubTest, AppGoneCancelsAPendingLift) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  uint64_t b = attach(1, "b");
  breakAcknowledged(1, a, 1);
  hub_.detach(a);  // a lift is due in 30 s
  hub_.appGone(1);
  connectApp(1);  // the same session's stream again (new gate)
  now_ += kDefaultGrace + 1s;
  hub_.tick();
  EXPECT_TRUE(apps_[1].controls.empty());
  (void)b;
}

// ---- grace periods ------------------------------------------------------

TEST_F(DebugHubTest, BreakLiftsAfterGraceWhenItsFrontendLeavesAndAnotherStays) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "b");
  breakAcknowledged(1, a, 1);
  size_t sent = apps_[1].controls.size();
  size_t b_updates = frontends_["b"].updates.size();
  hub_.detach(a);

  now_ += 4s;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent) << "lifted before the grace ran out";

  now_ += 1s;  // exactly a's grace
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  const v1::TaskControl& lift = apps_[1].controls.back();
  EXPECT_EQ(lift.action_case(), v1::TaskControl::kHold);
  EXPECT_FALSE(lift.hold());
  EXPECT_NE(lift.control_id(), 0u);
  // b is told.
  ASSERT_EQ(frontends_["b"].updates.size(), b_updates + 1);
  const v1::DebugUpdate& news = frontends_["b"].updates.back();
  EXPECT_EQ(news.command_id(), 0u);
  EXPECT_NE(news.ack().message().find("grace period over"), std::string::npos) << news.ack().message();

  // Once.
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent + 1);

  // The app's answer to the lift is news for b (nobody is waiting for it).
  report(1, {.control_id = lift.control_id(), .message = "continue: tasks may start", .held = false});
  EXPECT_EQ(frontends_["b"].updates.back().command_id(), 0u);
  EXPECT_EQ(frontends_["b"].updates.back().ack().message(), "continue: tasks may start");
}

TEST_F(DebugHubTest, GraceZeroMeansTheDefault) {
  connectApp(1);
  uint64_t a = attach(1, "a", 0s);
  attach(1, "b");
  breakAcknowledged(1, a, 1);
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += kDefaultGrace - 1s;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
  now_ += 1s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  EXPECT_EQ(apps_[1].controls.back().action_case(), v1::TaskControl::kHold);
}

TEST_F(DebugHubTest, EverythingLiftsAfterGraceWhenNoFrontendIsLeft) {
  connectApp(1);
  uint64_t a = attach(1, "a", 10s);
  breakAcknowledged(1, a, 1);
  hub_.send(a, 2, block({4, 5}));
  hub_.send(a, 3, blockFunction("f"));
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  EXPECT_EQ(hub_.state(1).frontends, 0u);

  now_ += 9s;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
  now_ += 1s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  const v1::TaskControl& lift = apps_[1].controls.back();
  EXPECT_EQ(lift.action_case(), v1::TaskControl::kReleaseAll);
  EXPECT_TRUE(lift.release_all());
  EXPECT_NE(lift.control_id(), 0u);
  DebugHub::GateState g = hub_.state(1);
  EXPECT_TRUE(g.blocked.empty());
  EXPECT_TRUE(g.blocked_functions.empty());
}

TEST_F(DebugHubTest, BlocksAloneAlsoLiftWhenNoFrontendIsLeft) {
  connectApp(1);
  uint64_t a = attach(1, "a", 2s);
  hub_.send(a, 1, block({4}));
  report(1, {.control_id = lastControlId(1), .message = "task 4 blocked"});
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += 2s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  EXPECT_TRUE(apps_[1].controls.back().release_all());
}

TEST_F(DebugHubTest, NothingLiftsWhenNothingWasHeld) {
  connectApp(1);
  uint64_t a = attach(1, "a", 1s);
  uint64_t b = attach(1, "b", 1s);
  hub_.send(a, 1, hold(false));
  report(1, {.control_id = lastControlId(1), .message = "continue: tasks may start"});
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  hub_.detach(b);
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
}

TEST_F(DebugHubTest, AnotherFrontendHoldingItsOwnBreakPreventsTheLift) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  uint64_t b = attach(1, "b", 20s);
  breakAcknowledged(1, a, 1);
  breakAcknowledged(1, b, 1);
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent) << "b still holds its break";

  // When b leaves too, everything lifts after b's grace.
  hub_.detach(b);
  now_ += 19s;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
  now_ += 1s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  EXPECT_TRUE(apps_[1].controls.back().release_all());
}

TEST_F(DebugHubTest, ContinueFromAnotherFrontendReleasesTheHolder) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  uint64_t b = attach(1, "b");
  breakAcknowledged(1, a, 1);
  hub_.send(b, 1, hold(false));
  report(1, {.control_id = lastControlId(1), .message = "continue: tasks may start", .held = false});
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);  // a holds nothing now
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
}

TEST_F(DebugHubTest, FrontendAttachingDuringTheGraceCancelsTheLift) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  breakAcknowledged(1, a, 1);
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);  // the last one: everything would lift at +5 s
  now_ += 3s;
  hub_.tick();
  attach(1, "c");
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent) << "c is attached: it decides";
  EXPECT_TRUE(frontends_["c"].updates.empty());
}

TEST_F(DebugHubTest, FrontendAttachingDuringTheGraceCancelsTheBreakLift) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "b");
  breakAcknowledged(1, a, 1);
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);  // b stays; the break would lift at +5 s
  now_ += 2s;
  attach(1, "c");
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
}

TEST_F(DebugHubTest, FrontendAttachingToAnotherSessionDoesNotCancelTheLift) {
  connectApp(1);
  connectApp(2);
  uint64_t a = attach(1, "a", 5s);
  breakAcknowledged(1, a, 1);
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += 2s;
  attach(2, "elsewhere");
  now_ += 3s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  EXPECT_TRUE(apps_[1].controls.back().release_all());
  EXPECT_TRUE(apps_[2].controls.empty());
}

TEST_F(DebugHubTest, StepMakesItsFrontendAHolder) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "b");
  v1::TaskControl step;
  step.set_step(2);
  hub_.send(a, 1, step);
  report(1, {.control_id = lastControlId(1),
             .message = "step 2: that many tasks may start, then break",
             .held = true,
             .steps_left = 2});
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += 5s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  EXPECT_EQ(apps_[1].controls.back().action_case(), v1::TaskControl::kHold);
  EXPECT_FALSE(apps_[1].controls.back().hold());
}

TEST_F(DebugHubTest, AppReportingNotHeldReleasesTheHolders) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "b");
  breakAcknowledged(1, a, 1);
  // The gate says it is no longer held (e.g. a continue from elsewhere).
  report(1, {.message = "released: another reason", .held = false});
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
}

TEST_F(DebugHubTest, PauseHitMakesThePauseSettersHolders) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "b");
  hub_.send(a, 1, pauseOn(v1::PAUSE_EVENT_TASK_START));
  report(1, {.control_id = lastControlId(1), .message = "will pause on task_start"});
  report(1, {.message = "paused on task_start: no task will start",
             .held = true,
             .paused_on = v1::PAUSE_EVENT_TASK_START});
  // b sees the pause as news.
  ASSERT_FALSE(frontends_["b"].news().empty());
  EXPECT_EQ(frontends_["b"].news().back().ack().message(), "paused on task_start: no task will start");
  EXPECT_TRUE(frontends_["b"].news().back().status().held());

  size_t sent = apps_[1].controls.size();
  hub_.detach(a);  // a held the pause's break
  now_ += 5s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), sent + 1);
  EXPECT_EQ(apps_[1].controls.back().action_case(), v1::TaskControl::kHold);
  EXPECT_FALSE(apps_[1].controls.back().hold());
}

TEST_F(DebugHubTest, FrontendThatSetNoPauseDoesNotHoldThePause) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  uint64_t b = attach(1, "b", 5s);
  hub_.send(a, 1, pauseOn(v1::PAUSE_EVENT_BARRIER));
  report(1, {.control_id = lastControlId(1), .message = "will pause on barrier"});
  report(1, {.message = "paused on barrier: no task will start", .held = true, .paused_on = v1::PAUSE_EVENT_BARRIER});
  size_t sent = apps_[1].controls.size();
  hub_.detach(b);  // b holds nothing; a (the holder) stays
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
}

TEST_F(DebugHubTest, PauseSetButNotHitHoldsNothing) {
  connectApp(1);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "b");
  hub_.send(a, 1, pauseOn(v1::PAUSE_EVENT_TASK_END));
  report(1, {.control_id = lastControlId(1), .message = "will pause on task_end"});
  size_t sent = apps_[1].controls.size();
  hub_.detach(a);
  now_ += 1h;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent);
}

TEST_F(DebugHubTest, HeldWithNoFrontendAtAllLiftsAfterTheDefaultGrace) {
  // A break at start whose frontend never came.
  connectApp(1);
  report(1, {.message = "worker parked before task 1", .held = true, .parked = 1});
  now_ += kDefaultGrace - 1s;
  hub_.tick();
  EXPECT_TRUE(apps_[1].controls.empty());
  // More reports while held do not push the lift back.
  report(1, {.message = "worker parked before task 2", .held = true, .parked = 2});
  now_ += 1s;
  hub_.tick();
  ASSERT_EQ(apps_[1].controls.size(), 1u);
  EXPECT_TRUE(apps_[1].controls[0].release_all());
  EXPECT_NE(apps_[1].controls[0].control_id(), 0u);
}

TEST_F(DebugHubTest, HeldWithNoFrontendIsCancelledByAFrontendAttaching) {
  connectApp(1);
  report(1, {.message = "worker parked before task 1", .held = true, .parked = 1});
  now_ += 10s;
  attach(1, "late");
  now_ += 1h;
  hub_.tick();
  EXPECT_TRUE(apps_[1].controls.empty());
}

TEST_F(DebugHubTest, NotHeldWithNoFrontendLiftsNothing) {
  connectApp(1);
  report(1, {.message = "worker left", .held = false});
  now_ += 1h;
  hub_.tick();
  EXPECT_TRUE(apps_[1].controls.empty());
}

TEST_F(DebugHubTest, DetachRemovesTheFrontendsPendingCommands) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  attach(1, "b");
  hub_.send(a, 31, block({8}));
  uint64_t id = lastControlId(1);
  hub_.detach(a);
  size_t a_updates = frontends_["a"].updates.size();
  report(1, {.control_id = id, .message = "task 8 blocked"});
  // a is gone and hears nothing; b gets it as plain news.
  EXPECT_EQ(frontends_["a"].updates.size(), a_updates);
  auto news = frontends_["b"].news();
  ASSERT_EQ(news.size(), 1u);
  EXPECT_EQ(news[0].ack().message(), "task 8 blocked");
  EXPECT_TRUE(frontends_["b"].acks(31).empty());
  // Commands for a gone frontend are ignored.
  size_t sent = apps_[1].controls.size();
  hub_.send(a, 32, hold(true));
  EXPECT_EQ(apps_[1].controls.size(), sent);
  hub_.detach(a);  // twice: nothing happens
}

TEST_F(DebugHubTest, DetachKeepsOtherFrontendsPendingCommands) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  uint64_t b = attach(1, "b");
  hub_.send(b, 41, block({8}));
  uint64_t id = lastControlId(1);
  hub_.detach(a);
  report(1, {.control_id = id, .message = "task 8 blocked"});
  auto acks = frontends_["b"].acks(41);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].ack().message(), "task 8 blocked");
}

// ---- a program that leaves, pauses turned off ---------------------------

// The program is gone: nothing is held, whatever its gate said last.
TEST_F(DebugHubTest, AppGoneClearsTheGateState) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  hub_.send(a, 1, block({4}));
  breakAcknowledged(1, a, 2);
  hub_.appGone(1);
  DebugHub::GateState g = hub_.state(1);
  EXPECT_FALSE(g.app);
  EXPECT_FALSE(g.held);
  EXPECT_TRUE(g.blocked.empty());
}

// A frontend that turned its pause off holds nothing when another's hits.
TEST_F(DebugHubTest, PauseTurnedOffDoesNotMakeAHolder) {
  connectApp(1);
  uint64_t a = attach(1, "a");
  uint64_t b = attach(1, "b", 5s);
  hub_.send(a, 1, pauseOn(v1::PAUSE_EVENT_BARRIER, true));
  hub_.send(a, 2, pauseOn(v1::PAUSE_EVENT_BARRIER, false));
  hub_.send(b, 1, pauseOn(v1::PAUSE_EVENT_TASK_START, true));
  report(1, {.message = "paused on task_start: no task will start",
             .held = true,
             .paused_on = v1::PAUSE_EVENT_TASK_START});
  size_t sent = apps_[1].controls.size();
  hub_.detach(b);  // the pause's owner leaves; a set no pause now
  now_ += 5s;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), sent + 1);
}

// ---- sessions -----------------------------------------------------------

TEST_F(DebugHubTest, SessionsAreIndependent) {
  counts_[1] = {0, 0, 1, 0};
  counts_[2] = {0, 0, 5, 0};
  connectApp(1);
  connectApp(2);
  uint64_t a = attach(1, "a", 5s);
  attach(1, "a2");
  uint64_t b = attach(2, "b", 5s);
  breakAcknowledged(1, a, 1);
  breakAcknowledged(2, b, 1);
  EXPECT_EQ(frontends_["a"].acks(1).at(0).status().session_id(), 1u);
  EXPECT_EQ(frontends_["a"].acks(1).at(0).status().running(), 1u);
  EXPECT_EQ(frontends_["b"].acks(1).at(0).status().session_id(), 2u);
  EXPECT_EQ(frontends_["b"].acks(1).at(0).status().running(), 5u);
  // Each app got only its own frontend's control.
  EXPECT_EQ(apps_[1].controls.size(), 1u);
  EXPECT_EQ(apps_[2].controls.size(), 1u);
  // a2 heard about a's break, b's session nothing of it.
  EXPECT_EQ(frontends_["a2"].news().size(), 1u);
  EXPECT_EQ(frontends_["b"].news().size(), 0u);

  // a leaves: only session 1's break lifts.
  hub_.detach(a);
  now_ += 5s;
  hub_.tick();
  EXPECT_EQ(apps_[1].controls.size(), 2u);
  EXPECT_EQ(apps_[2].controls.size(), 1u);
  EXPECT_TRUE(hub_.state(2).held);
  EXPECT_EQ(hub_.state(2).frontends, 1u);

  // Session 1's app leaving does not touch session 2.
  hub_.appGone(1);
  EXPECT_TRUE(hub_.appConnected(2));
  EXPECT_EQ(frontends_["b"].news().size(), 0u);
  hub_.send(b, 2, hold(false));
  EXPECT_EQ(apps_[2].controls.size(), 2u);
}

}  // namespace
}  // namespace nk
