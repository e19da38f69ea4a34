#include "tasks/debug_command_policy.h"
#include "graph_event_batch.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace nk {
namespace {

namespace fs = std::filesystem;
namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

// The session's graph: tasks 1 and 2 of "f" not started (2 queued), 3 of
// "f" running, 4 of "g" finished; 5 is only a placeholder (a dependence
// named it before its creation arrived).
constexpr uint64_t kNotQueued = 1, kQueued = 2, kRunning = 3, kFinished = 4, kPlaceholder = 5, kUnknown = 99;
constexpr pid_t kAppPid = 4242;

GraphEvent created(uint64_t task, std::string_view function) {
  GraphEvent e;
  e.type = GraphEvent::Type::kCreated;
  e.task = task;
  e.function = function;
  return e;
}

GraphEvent moved(uint64_t task, GraphEvent::Type type) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  return e;
}

class DebugCommandPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path();
    fs::create_directories(dir_ / "proc");
    registry_.emplace(dir_ / "recordings", registry_options_);
    hub_.emplace(30s, DebugCommandPolicy::taskCounts(*registry_));
    policy_.emplace(*registry_, *hub_, dir_ / "proc");

    auto id = registry_->open(kAppPid, owner_, "prog --flag");
    ASSERT_TRUE(id.ok());
    session_ = *id;
    GraphEvent placeholder_edge;
    placeholder_edge.type = GraphEvent::Type::kDependence;
    placeholder_edge.from = kPlaceholder;
    placeholder_edge.task = kNotQueued;
    std::vector<GraphEvent> events = {
        created(kNotQueued, "f"), created(kQueued, "f"), created(kRunning, "f"), created(kFinished, "g"),
        moved(kQueued, GraphEvent::Type::kQueued), moved(kRunning, GraphEvent::Type::kStarted),
        moved(kFinished, GraphEvent::Type::kStarted), moved(kFinished, GraphEvent::Type::kFinished),
        placeholder_edge,
    };
    ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());

    hub_->appConnected(session_, [this](const v1::TaskControl& control) {
      controls_.push_back(control);
      return true;
    });
    frontend_ = hub_->attach(session_, [this](const v1::DebugUpdate& update) { updates_.push_back(update); }, 0s);
  }
  void TearDown() override {
    policy_.reset();
    hub_.reset();
    registry_.reset();
  }

  // A process of the fake procfs, owned by whoever runs the test.
  pid_t fakeProcess(pid_t pid) {
    fs::create_directories(dir_ / "proc" / std::to_string(pid));
    return pid;
  }

  // Sends one command as `caller`; the acknowledgement comes back at once
  // when the policy answers or refuses it.
  void run(v1::DebugCommand command, DebugCommandPolicy::Caller caller) {
    command.set_command_id(++last_command_);
    policy_->handle(frontend_, session_, caller, command);
  }
  void run(const v1::DebugCommand& command) { run(command, owner()); }

  DebugCommandPolicy::Caller owner() const { return {owner_, false}; }

  // The policy's own answer to the last command, if it gave one.
  std::optional<v1::DebugUpdate> answer() const {
    for (const auto& u : updates_)
      if (u.command_id() == last_command_) return u;
    return std::nullopt;
  }

  // Refused, with exactly `message`, and nothing sent to the app.
  void expectRefused(const v1::DebugCommand& command, const std::string& message,
                     std::optional<DebugCommandPolicy::Caller> caller = std::nullopt) {
    size_t sent = controls_.size();
    run(command, caller.value_or(owner()));
    auto a = answer();
    ASSERT_TRUE(a) << "no answer to: " << command.ShortDebugString();
    EXPECT_FALSE(a->ack().ok());
    EXPECT_EQ(a->ack().message(), message);
    EXPECT_EQ(controls_.size(), sent) << "a refused command reached the app";
  }

  // Allowed: sent to the app as one control, with no answer yet (the app's
  // report brings it).
  v1::TaskControl expectSent(const v1::DebugCommand& command,
                             std::optional<DebugCommandPolicy::Caller> caller = std::nullopt) {
    size_t sent = controls_.size();
    run(command, caller.value_or(owner()));
    EXPECT_FALSE(answer()) << "answered instead of sent: " << answer()->ack().message();
    EXPECT_EQ(controls_.size(), sent + 1);
    if (controls_.size() != sent + 1) return {};
    EXPECT_NE(controls_.back().control_id(), 0u);
    return controls_.back();
  }

  static v1::DebugCommand block(std::vector<uint64_t> tasks, bool blocked) {
    v1::DebugCommand c;
    for (uint64_t t : tasks) c.mutable_block()->add_task_ids(t);
    c.mutable_block()->set_blocked(blocked);
    return c;
  }
  static v1::DebugCommand priority(uint64_t task, int32_t level) {
    v1::DebugCommand c;
    c.mutable_priority()->set_task_id(task);
    c.mutable_priority()->set_level(level);
    return c;
  }
  static v1::DebugCommand gdb(pid_t tracer) {
    v1::DebugCommand c;
    c.mutable_gdb()->set_function("f");
    c.mutable_gdb()->set_tracer_pid(tracer);
    return c;
  }

  nk::test::TempDir tmp_{"debug-policy"};
  fs::path dir_;
  uid_t owner_ = ::geteuid() + 1000;  // never the uid of a fake process's directory
  SessionRegistry::Options registry_options_;
  std::optional<SessionRegistry> registry_;
  std::optional<DebugHub> hub_;
  std::optional<DebugCommandPolicy> policy_;
  uint64_t session_ = 0;
  uint64_t frontend_ = 0;
  uint64_t last_command_ = 0;
  std::vector<v1::TaskControl> controls_;
  std::vector<v1::DebugUpdate> updates_;
};

TEST_F(DebugCommandPolicyTest, TheOwnerAndAnAdminMayReachASessionOthersMayNot) {
  auto mine = policy_->sessionFor(owner(), session_, "watch");
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->id, session_);
  EXPECT_EQ(mine->pid, kAppPid);
  EXPECT_TRUE(policy_->sessionFor({owner_ + 1, true}, session_, "debug").ok());

  auto theirs = policy_->sessionFor({owner_ + 1, false}, session_, "debug");
  ASSERT_FALSE(theirs.ok());
  EXPECT_EQ(theirs.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(theirs.error().message, "task session " + std::to_string(session_) +
                                        " belongs to another user; only its owner or an admin may debug it");

  auto missing = policy_->sessionFor(owner(), 77, "watch");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().message, "no task session 77 (see 'nodekeeper tasks')");
}

TEST_F(DebugCommandPolicyTest, GreetingSaysWhichSessionWhetherLiveAndWhoElseIsThere) {
  auto info = registry_->info(session_);
  ASSERT_TRUE(info);
  policy_->greet(frontend_, *info, 7);
  ASSERT_EQ(updates_.size(), 1u);
  const v1::DebugUpdate& hello = updates_.back();
  EXPECT_EQ(hello.command_id(), 7u);
  EXPECT_TRUE(hello.ack().ok());
  EXPECT_EQ(hello.ack().message(), "attached to task session " + std::to_string(session_) + " (pid " +
                                       std::to_string(kAppPid) + ", prog --flag); live; 1 frontend(s)");
  EXPECT_EQ(hello.status().session_id(), session_);
  EXPECT_TRUE(hello.status().live());

  hub_->appGone(session_);
  updates_.clear();
  policy_->greet(frontend_, *info, 8);
  ASSERT_EQ(updates_.size(), 1u);
  EXPECT_EQ(updates_.back().ack().message(), "attached to task session " + std::to_string(session_) + " (pid " +
                                                 std::to_string(kAppPid) +
                                                 ", prog --flag); ended: replay only, no control; 1 frontend(s)");
}

TEST_F(DebugCommandPolicyTest, StatusIsAnsweredHereWithCountsPerFunctionAndTheReadyTasks) {
  v1::DebugCommand c;
  c.mutable_status();
  run(c);
  EXPECT_TRUE(controls_.empty());
  auto a = answer();
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->ack().ok());
  const v1::DebugStatus& s = a->status();
  EXPECT_EQ(s.session_id(), session_);
  // The whole session's counts (the placeholder counts as not queued).
  EXPECT_EQ(s.not_queued(), 2u);
  EXPECT_EQ(s.queued(), 1u);
  EXPECT_EQ(s.running(), 1u);
  EXPECT_EQ(s.finished(), 1u);
  // The placeholder has no function yet.
  ASSERT_EQ(s.functions_size(), 3);
  EXPECT_EQ(s.functions(0).function(), "(unnamed)");
  EXPECT_EQ(s.functions(0).not_queued(), 1u);
  EXPECT_EQ(s.functions(1).function(), "f");
  EXPECT_EQ(s.functions(1).not_queued(), 1u);
  EXPECT_EQ(s.functions(1).queued(), 1u);
  EXPECT_EQ(s.functions(1).running(), 1u);
  EXPECT_EQ(s.functions(1).finished(), 0u);
  EXPECT_EQ(s.functions(2).function(), "g");
  EXPECT_EQ(s.functions(2).finished(), 1u);
  // Task 1 waits for the placeholder; task 2 has no predecessor.
  ASSERT_EQ(s.ready_size(), 1);
  EXPECT_EQ(s.ready(0), kQueued);
}

TEST_F(DebugCommandPolicyTest, StatusCountsATaskWhosePredecessorsFinishedAsQueuedWhateverItsRawState) {
  // 6 waits on finished 4: ready, though OMPT never says "queued"; 7 waits
  // on running 3.
  GraphEvent after_finished, after_running;
  after_finished.type = after_running.type = GraphEvent::Type::kDependence;
  after_finished.from = kFinished;
  after_finished.task = 6;
  after_running.from = kRunning;
  after_running.task = 7;
  std::vector<GraphEvent> events = {created(6, "h"), created(7, "h"), after_finished, after_running};
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());

  v1::DebugCommand c;
  c.mutable_status();
  run(c);
  auto a = answer();
  ASSERT_TRUE(a);
  const v1::DebugStatus& s = a->status();
  EXPECT_EQ(s.queued(), 2u);      // 2 and 6
  EXPECT_EQ(s.not_queued(), 3u);  // 1, the placeholder and 7
  ASSERT_EQ(s.functions_size(), 4);
  EXPECT_EQ(s.functions(3).function(), "h");
  EXPECT_EQ(s.functions(3).queued(), 1u);
  EXPECT_EQ(s.functions(3).not_queued(), 1u);
  EXPECT_EQ(std::vector<uint64_t>(s.ready().begin(), s.ready().end()), (std::vector<uint64_t>{kQueued, 6}));
  EXPECT_EQ(s.ready_total(), 2u);
  EXPECT_EQ(s.stall(), "");
}

TEST_F(DebugCommandPolicyTest, StatusSaysWhenBlockedTasksHoldEveryWorkerAndWhatFreesThem) {
  // One worker has run a task: the team as far as the daemon knows.
  GraphEvent g = created(8, "g"), started = moved(8, GraphEvent::Type::kStarted);
  started.thread = 0;
  std::vector<GraphEvent> events = {g, started, moved(8, GraphEvent::Type::kFinished)};
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());

  v1::DebugCommand block_f;
  block_f.mutable_block_function()->set_function("f");
  block_f.mutable_block_function()->set_blocked(true);
  expectSent(block_f);
  google::protobuf::RepeatedPtrField<v1::GateReport> reports;
  v1::GateReport* parked = reports.Add();
  parked->set_ok(true);
  parked->set_message("worker parked before task 2");
  parked->set_parked_workers(1);
  parked->set_task_id(kQueued);
  hub_->gateReports(session_, reports);

  v1::DebugCommand c;
  c.mutable_status();
  run(c);
  auto a = answer();
  ASSERT_TRUE(a);
  const v1::DebugStatus& s = a->status();
  EXPECT_EQ(s.stall(), "the one worker is held by blocked tasks of f (2 tasks); 'unblock function f' frees them");
  EXPECT_EQ(s.ready_size(), 0) << "f's tasks are blocked";
  EXPECT_EQ(s.queued(), 1u);
  // The news of the parked worker carried it too.
  bool news_said_so = false;
  for (const auto& u : updates_)
    if (u.command_id() == 0 && u.status().stall() == s.stall()) news_said_so = true;
  EXPECT_TRUE(news_said_so);
}

TEST_F(DebugCommandPolicyTest, ATaskStartedAfterTheGatesLastReportMeansNoStall) {
  GraphEvent started = moved(kQueued, GraphEvent::Type::kStarted);
  started.thread = 0;
  started.timestamp_ns = 2'000;
  v1::DebugCommand block_g;
  block_g.mutable_block_function()->set_function("g");
  block_g.mutable_block_function()->set_blocked(true);
  GraphEvent g = created(8, "g");
  std::vector<GraphEvent> events = {g};
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());
  expectSent(block_g);
  google::protobuf::RepeatedPtrField<v1::GateReport> reports;
  v1::GateReport* parked = reports.Add();
  parked->set_ok(true);
  parked->set_parked_workers(1);
  parked->set_timestamp_ns(1'000);
  hub_->gateReports(session_, reports);
  auto stall = [&] {
    v1::DebugCommand c;
    c.mutable_status();
    run(c);
    auto a = answer();
    return a ? a->status().stall() : "no answer";
  };
  EXPECT_NE(stall(), "");
  // Task 2 starts at 2 us, after the report at 1 us: a worker is free.
  events = {started};
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());
  EXPECT_EQ(stall(), "");
}

TEST_F(DebugCommandPolicyTest, TheBlockedListIsCutAndItsTotalSaysHowMany) {
  std::vector<GraphEvent> events;
  for (uint64_t id = 100; id < 200; ++id) events.push_back(created(id, "many"));
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());
  std::vector<uint64_t> ids;
  for (uint64_t id = 100; id < 200; ++id) ids.push_back(id);
  expectSent(block(ids, true));

  v1::DebugCommand c;
  c.mutable_status();
  run(c);
  auto a = answer();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status().blocked_size(), 64);
  EXPECT_EQ(a->status().blocked_total(), 100u);
  EXPECT_EQ(a->status().ready_total(), 1u);  // task 2
}

TEST_F(DebugCommandPolicyTest, AttachingTwiceIsRefused) {
  v1::DebugCommand c;
  c.mutable_attach()->set_session_id(session_);
  expectRefused(c, "already attached to task session " + std::to_string(session_));
}

TEST_F(DebugCommandPolicyTest, ACommandWithNoActionIsRefused) {
  expectRefused(v1::DebugCommand(), "a command with no action");
}

TEST_F(DebugCommandPolicyTest, BreakAndContinueHoldAndReleaseTheGate) {
  v1::DebugCommand brk;
  brk.mutable_break_all();
  v1::TaskControl held = expectSent(brk);
  ASSERT_EQ(held.action_case(), v1::TaskControl::kHold);
  EXPECT_TRUE(held.hold());

  v1::DebugCommand cont;
  cont.mutable_continue_all();
  v1::TaskControl released = expectSent(cont);
  ASSERT_EQ(released.action_case(), v1::TaskControl::kHold);
  EXPECT_FALSE(released.hold());
}

TEST_F(DebugCommandPolicyTest, StepNeedsAtLeastOneTask) {
  v1::DebugCommand c;
  c.mutable_step()->set_tasks(0);
  expectRefused(c, "step: the number of tasks must be at least 1");
  c.mutable_step()->set_tasks(3);
  v1::TaskControl control = expectSent(c);
  ASSERT_EQ(control.action_case(), v1::TaskControl::kStep);
  EXPECT_EQ(control.step(), 3u);
}

TEST_F(DebugCommandPolicyTest, BlockNeedsTasksTheDaemonHasSeenThatHaveNotStarted) {
  expectRefused(block({}, true), "block: name at least one task");
  const std::string s = std::to_string(session_);
  expectRefused(block({kNotQueued, kUnknown}, true),
                "block: task 99: no such task in session " + s + " (see 'status'); nothing changed");
  expectRefused(block({kPlaceholder}, true),
                "block: task 5: no such task in session " + s + " (see 'status'); nothing changed");
  expectRefused(block({kFinished}, true), "block: task 4 has finished; nothing changed");
  expectRefused(block({kRunning}, true), "block: task 3 is already running; nothing changed");

  v1::TaskControl control = expectSent(block({kNotQueued, kQueued}, true));
  ASSERT_EQ(control.action_case(), v1::TaskControl::kBlock);
  EXPECT_TRUE(control.block().blocked());
  EXPECT_EQ(std::vector<uint64_t>(control.block().task_ids().begin(), control.block().task_ids().end()),
            (std::vector<uint64_t>{kNotQueued, kQueued}));
}

TEST_F(DebugCommandPolicyTest, UnblockingIsAllowedWhateverTheTasksState) {
  v1::TaskControl control = expectSent(block({kRunning, kFinished, kUnknown}, false));
  ASSERT_EQ(control.action_case(), v1::TaskControl::kBlock);
  EXPECT_FALSE(control.block().blocked());
  EXPECT_EQ(control.block().task_ids_size(), 3);
}

TEST_F(DebugCommandPolicyTest, BlockFunctionNamesItAndCarriesItsTasksNotStarted) {
  v1::DebugCommand c;
  c.mutable_block_function()->set_blocked(true);
  expectRefused(c, "block function: name the function (as 'status' lists it)");

  c.mutable_block_function()->set_function("f");
  v1::TaskControl control = expectSent(c);
  ASSERT_EQ(control.action_case(), v1::TaskControl::kBlockFunction);
  EXPECT_EQ(control.block_function().function(), "f");
  EXPECT_TRUE(control.block_function().blocked());
  EXPECT_EQ(std::vector<uint64_t>(control.block_function().task_ids().begin(),
                                  control.block_function().task_ids().end()),
            (std::vector<uint64_t>{kNotQueued, kQueued}));

  // A function the graph has not met: nothing a name could be checked
  // against, so refused with the candidates.
  c.mutable_block_function()->set_function("later");
  expectRefused(c, "block function: no function 'later' among the session's tasks (f, g); a function is known once "
                   "one of its tasks has been created");
}

// Task constructs named as the OpenMP tool names them: a user types the
// whole name, the function's (all its constructs), or a prefix of one
// function's names; the app is sent the exact names, one control each, and
// the command is acknowledged once, when the app has reported them all.
TEST_F(DebugCommandPolicyTest, BlockFunctionTakesTheFunctionOrAPrefixAndSendsTheExactNames) {
  std::vector<GraphEvent> events = {created(10, "fib (fib.c:31)"), created(11, "fib (fib.c:40)"),
                                    created(12, "fill (fill.c:3)"), created(13, "ns::work<int> (w.cc:12)"),
                                    created(14, "fib (fib.c:31)"), created(15, "fibonacci (f.c:2)")};
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());
  auto blockFunction = [](const std::string& name, bool blocked) {
    v1::DebugCommand c;
    c.mutable_block_function()->set_function(name);
    c.mutable_block_function()->set_blocked(blocked);
    return c;
  };
  auto sentNames = [&](size_t from) {
    std::vector<std::string> names;
    for (size_t i = from; i < controls_.size(); ++i) names.push_back(controls_[i].block_function().function());
    return names;
  };
  auto reportOk = [&](const v1::TaskControl& control) {
    google::protobuf::RepeatedPtrField<v1::GateReport> reports;
    v1::GateReport* r = reports.Add();
    r->set_control_id(control.control_id());
    r->set_ok(true);
    r->set_message("blocked of " + control.block_function().function());
    hub_->gateReports(session_, reports);
  };

  // The bare function: each of its constructs, with its tasks (not
  // fibonacci's, which "fib" begins too).
  size_t before = controls_.size();
  run(blockFunction("fib", true));
  ASSERT_EQ(sentNames(before), (std::vector<std::string>{"fib (fib.c:31)", "fib (fib.c:40)"}));
  EXPECT_EQ(std::vector<uint64_t>(controls_[before].block_function().task_ids().begin(),
                                  controls_[before].block_function().task_ids().end()),
            (std::vector<uint64_t>{10, 14}));
  EXPECT_EQ(controls_[before + 1].block_function().task_ids_size(), 1);
  EXPECT_TRUE(controls_[before + 1].block_function().blocked());
  reportOk(controls_[before]);
  EXPECT_FALSE(answer()) << "answered before every part reported";
  reportOk(controls_[before + 1]);
  ASSERT_TRUE(answer());
  EXPECT_TRUE(answer()->ack().ok());
  EXPECT_EQ(answer()->ack().message(), "blocked of fib (fib.c:31); blocked of fib (fib.c:40)");
  EXPECT_EQ(hub_->state(session_).blocked_functions, (std::set<std::string>{"fib (fib.c:31)", "fib (fib.c:40)"}));

  // A prefix of one function's names; a whole name.
  before = controls_.size();
  run(blockFunction("ns::w", true));
  EXPECT_EQ(sentNames(before), (std::vector<std::string>{"ns::work<int> (w.cc:12)"}));
  before = controls_.size();
  run(blockFunction("fib (fib.c:4", false));
  EXPECT_EQ(sentNames(before), (std::vector<std::string>{"fib (fib.c:40)"}));
  EXPECT_FALSE(controls_.back().block_function().blocked());
  before = controls_.size();
  run(blockFunction("fill (fill.c:3)", true));
  EXPECT_EQ(sentNames(before), (std::vector<std::string>{"fill (fill.c:3)"}));

  // A prefix of several functions' names, or of none: refused, with the
  // candidates.
  expectRefused(blockFunction("fi", true),
                "block function: 'fi' could be 3 functions: fib (fib.c:31), fib (fib.c:40), fibonacci (f.c:2), "
                "fill (fill.c:3); give more of the name");
  expectRefused(blockFunction("work", false),
                "unblock function: no function 'work' among the session's tasks (f, fib (fib.c:31), fib (fib.c:40), "
                "fibonacci (f.c:2), fill (fill.c:3) (and 2 more)); a function is known once one of its tasks has "
                "been created");
}

TEST_F(DebugCommandPolicyTest, PriorityNeedsATaskThatHasNotStarted) {
  const std::string s = std::to_string(session_);
  expectRefused(priority(kUnknown, 5),
                "priority: task 99: no such task in session " + s + " (see 'status'); nothing changed");
  expectRefused(priority(kFinished, 5), "priority: task 4 has finished; nothing changed");
  expectRefused(priority(kRunning, 5), "priority: task 3 is already running; nothing changed");

  v1::TaskControl control = expectSent(priority(kQueued, 5));
  ASSERT_EQ(control.action_case(), v1::TaskControl::kPriority);
  EXPECT_EQ(control.priority().task_id(), kQueued);
  EXPECT_EQ(control.priority().level(), 5);
}

TEST_F(DebugCommandPolicyTest, PauseNamesAnEvent) {
  v1::DebugCommand c;
  c.mutable_pause_on()->set_enabled(true);
  expectRefused(c, "pause: name the event (task_start, task_end, taskwait, barrier)");

  c.mutable_pause_on()->set_event(v1::PAUSE_EVENT_TASKWAIT);
  v1::TaskControl control = expectSent(c);
  ASSERT_EQ(control.action_case(), v1::TaskControl::kPauseOn);
  EXPECT_EQ(control.pause_on().event(), v1::PAUSE_EVENT_TASKWAIT);
  EXPECT_TRUE(control.pause_on().enabled());
}

TEST_F(DebugCommandPolicyTest, ThreadsNeedsAtLeastOne) {
  v1::DebugCommand c;
  c.set_threads(0);
  expectRefused(c, "threads: the number of threads must be at least 1");
  c.set_threads(4);
  v1::TaskControl control = expectSent(c);
  ASSERT_EQ(control.action_case(), v1::TaskControl::kThreads);
  EXPECT_EQ(control.threads(), 4u);
}

TEST_F(DebugCommandPolicyTest, GdbLetsInOnlyTheCallersOwnProcessUnlessTheCallerIsAnAdmin) {
  expectRefused(gdb(0), "gdb: give the pid of the gdb that will attach (tracer_pid)");
  expectRefused(gdb(-3), "gdb: give the pid of the gdb that will attach (tracer_pid)");
  expectRefused(gdb(31337), "gdb: no process 31337");

  pid_t tracer = fakeProcess(2718);
  // The fake process belongs to the test's user, not to the session's owner.
  expectRefused(gdb(tracer), "gdb: process 2718 is not yours");

  v1::TaskControl own = expectSent(gdb(tracer), DebugCommandPolicy::Caller{::geteuid(), false});
  ASSERT_EQ(own.action_case(), v1::TaskControl::kAllowTracer);
  EXPECT_EQ(own.allow_tracer(), tracer);

  v1::TaskControl admin = expectSent(gdb(tracer), DebugCommandPolicy::Caller{owner_, true});
  EXPECT_EQ(admin.allow_tracer(), tracer);
}

TEST_F(DebugCommandPolicyTest, AnAllowedCommandToAnEndedProgramIsRefusedByTheHub) {
  hub_->appGone(session_);
  v1::DebugCommand c;
  c.mutable_break_all();
  run(c);
  auto a = answer();
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->ack().ok());
  EXPECT_EQ(a->ack().message(),
            "task session " + std::to_string(session_) + ": its program is not running; nothing to control");
  EXPECT_TRUE(controls_.empty());
}

TEST_F(DebugCommandPolicyTest, TaskCountsComeFromTheRegistryAndOutliveTheGraph) {
  registry_->close(session_);
  v1::DebugStatus status;
  DebugCommandPolicy::taskCounts(*registry_)(session_, &status);
  EXPECT_EQ(status.not_queued(), 2u);
  EXPECT_EQ(status.queued(), 1u);
  EXPECT_EQ(status.running(), 1u);
  EXPECT_EQ(status.finished(), 1u);

  v1::DebugStatus untouched;
  DebugCommandPolicy::taskCounts(*registry_)(77, &untouched);
  EXPECT_EQ(untouched.not_queued() + untouched.queued() + untouched.running() + untouched.finished(), 0u);
}

TEST(DebugCommandPolicyRefusal, SaysNothingTookEffectAndWhy) {
  v1::DebugUpdate update = DebugCommandPolicy::refusal(12, "why");
  EXPECT_EQ(update.command_id(), 12u);
  EXPECT_FALSE(update.ack().ok());
  EXPECT_EQ(update.ack().message(), "why");
  EXPECT_FALSE(update.has_status());
}

}  // namespace
}  // namespace nk

namespace nk {
namespace {

class WindowedDebugCommandPolicyTest : public DebugCommandPolicyTest {
 protected:
  void SetUp() override {
    registry_options_.graph_max_tasks = 64;
    DebugCommandPolicyTest::SetUp();
  }
};

// Past the graph's window a finished task is no longer held; a command on
// it says it has finished, not that there is no such task.
TEST_F(WindowedDebugCommandPolicyTest, ATaskDroppedFromTheWindowHasFinished) {
  std::vector<GraphEvent> events;
  for (uint64_t id = 1000; id < 1400; ++id) {
    events.push_back(created(id, "leaf"));
    events.push_back(moved(id, GraphEvent::Type::kStarted));
    events.push_back(moved(id, GraphEvent::Type::kFinished));
  }
  ASSERT_TRUE(registry_->append(session_, test::batchOf(events)).ok());
  bool dropped = false;
  registry_->inspect(session_, [&](const TaskGraph& graph) { dropped = !graph.find(1000) && graph.wasDropped(1000); });
  ASSERT_TRUE(dropped);
  expectRefused(block({1000}, true), "block: task 1000 has finished; nothing changed");
  expectRefused(block({999999}, true), "block: task 999999: no such task in session " + std::to_string(session_) +
                                           " (see 'status'); nothing changed");
}

}  // namespace
}  // namespace nk
