#include "tasks/task_readiness.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace nk {
namespace {

using T = GraphEvent::Type;

GraphEvent created(uint64_t task, std::string_view function) {
  GraphEvent e;
  e.type = T::kCreated;
  e.task = task;
  e.function = function;
  return e;
}
GraphEvent dependence(uint64_t from, uint64_t to) {
  GraphEvent e;
  e.type = T::kDependence;
  e.from = from;
  e.task = to;
  e.address = 0x1000;
  e.kind = 3;
  return e;
}
GraphEvent state(T type, uint64_t task, int32_t thread = 0, int64_t ns = 0) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.thread = thread;
  e.timestamp_ns = ns;
  return e;
}

class TaskReadinessTest : public ::testing::Test {
 protected:
  void apply(std::initializer_list<GraphEvent> events) {
    for (const GraphEvent& e : events) graph_.apply(e);
  }
  TaskReadiness::View refresh(size_t max_ready = 64) {
    TaskReadiness::Blocked blocked{&blocked_, {}};
    blocked.functions.resize(graph_.functions().size());
    for (size_t f = 0; f < graph_.functions().size(); ++f)
      blocked.functions[f] = blocked_functions_.count(graph_.functions()[f]) != 0;
    return readiness_.refresh(graph_, blocked, max_ready);
  }
  // The counts of `function` in a view.
  TaskReadiness::Counts of(const TaskReadiness::View& view, const std::string& function) {
    for (size_t f = 0; f < graph_.functions().size(); ++f)
      if (graph_.functions()[f] == function) return view.by_function.at(f);
    ADD_FAILURE() << "no function " << function;
    return {};
  }

  TaskGraph graph_;
  TaskReadiness readiness_;
  std::set<uint64_t> blocked_;
  std::set<std::string> blocked_functions_;
};

TEST_F(TaskReadinessTest, ACreatedTaskWithNoPredecessorIsQueuedThoughTheRuntimeNeverSaidSo) {
  apply({created(1, "f"), created(2, "f")});
  ASSERT_EQ(graph_.countsByState()[static_cast<size_t>(TaskState::kQueued)], 0u);  // OMPT's view
  TaskReadiness::View v = refresh();
  EXPECT_EQ(v.total.queued, 2u);
  EXPECT_EQ(v.total.not_queued, 0u);
  EXPECT_EQ(of(v, "f").queued, 2u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(v.ready_total, 2u);
}

TEST_F(TaskReadinessTest, ASuccessorIsNotQueuedUntilEveryPredecessorHasFinished) {
  apply({created(1, "a"), created(2, "a"), created(3, "b"), dependence(1, 3), dependence(2, 3)});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(of(v, "b").not_queued, 1u);
  EXPECT_EQ(of(v, "b").queued, 0u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{1, 2}));

  apply({state(T::kStarted, 1), state(T::kFinished, 1)});
  v = refresh();
  EXPECT_EQ(of(v, "b").not_queued, 1u) << "task 2 has not finished";
  EXPECT_EQ(v.total.finished, 1u);

  apply({state(T::kStarted, 2)});
  v = refresh();
  EXPECT_EQ(of(v, "b").not_queued, 1u) << "running is not finished";
  EXPECT_EQ(v.total.running, 1u);

  apply({state(T::kFinished, 2)});
  v = refresh();
  EXPECT_EQ(of(v, "b").queued, 1u);
  EXPECT_EQ(of(v, "b").not_queued, 0u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{3}));
  EXPECT_EQ(v.total.finished, 2u);
  EXPECT_EQ(of(v, "a").finished, 2u);
}

TEST_F(TaskReadinessTest, AnEdgeArrivingAfterTheSuccessorWasSeenMakesItWaitAgain) {
  apply({created(1, "a"), created(2, "b")});
  EXPECT_EQ(refresh().total.queued, 2u);
  apply({dependence(1, 2)});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(v.total.queued, 1u);
  EXPECT_EQ(v.total.not_queued, 1u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{1}));
}

TEST_F(TaskReadinessTest, AnEdgeFromAFinishedTaskNeverHoldsItsSuccessor) {
  apply({created(1, "a"), state(T::kStarted, 1), state(T::kFinished, 1), created(2, "b"), dependence(1, 2)});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(of(v, "b").queued, 1u);
  EXPECT_EQ(readiness_.lastWork().pending_edges, 0u);
}

TEST_F(TaskReadinessTest, APlaceholderIsNotQueuedAndItsSuccessorWaitsForIt) {
  // Task 9 is named by a dependence before its creation arrived.
  apply({created(2, "b"), dependence(9, 2)});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(v.total.not_queued, 2u);
  EXPECT_EQ(v.total.queued, 0u);
  EXPECT_EQ(v.by_function.at(0).not_queued, 1u);  // the placeholder, unnamed
  EXPECT_TRUE(v.ready.empty());

  apply({created(9, "a")});
  v = refresh();
  EXPECT_EQ(of(v, "a").queued, 1u);
  EXPECT_EQ(of(v, "b").not_queued, 1u);
  EXPECT_EQ(v.by_function.at(0).not_queued, 0u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{9}));
}

TEST_F(TaskReadinessTest, BlockedTasksAreQueuedButNotReady) {
  apply({created(1, "f"), created(2, "g"), created(3, "g"), created(4, "f")});
  blocked_ = {1};
  blocked_functions_ = {"g"};
  TaskReadiness::View v = refresh();
  EXPECT_EQ(v.total.queued, 4u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{4}));
  EXPECT_EQ(v.ready_total, 1u);
  EXPECT_EQ(of(v, "f").queued, 2u);
  // What holds workers: one of f (by id), both of g.
  EXPECT_EQ(v.blocked_waiting.at(1), 1u);
  EXPECT_EQ(v.blocked_waiting.at(2), 2u);
}

TEST_F(TaskReadinessTest, TheReadyListIsCutButItsTotalCountsThemAll) {
  for (uint64_t id = 1; id <= 100; ++id) graph_.apply(created(id, "f"));
  TaskReadiness::View v = refresh(64);
  ASSERT_EQ(v.ready.size(), 64u);
  EXPECT_EQ(v.ready.front(), 1u);
  EXPECT_EQ(v.ready.back(), 64u);
  EXPECT_EQ(v.ready_total, 100u);
}

TEST_F(TaskReadinessTest, CountsMatchTheGraphsTotalsAndWorkersAreTheThreadsThatRanTasks) {
  apply({created(1, "f"), created(2, "f"), created(3, "g"), dependence(1, 3), state(T::kStarted, 1, 0),
         state(T::kStarted, 2, 1)});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(v.workers, 2u);
  apply({state(T::kFinished, 1), state(T::kFinished, 2), created(4, "g"), state(T::kStarted, 4, 1),
         state(T::kFinished, 4)});
  v = refresh();
  const auto& raw = graph_.countsByState();
  EXPECT_EQ(v.total.running, raw[static_cast<size_t>(TaskState::kRunning)]);
  EXPECT_EQ(v.total.finished, raw[static_cast<size_t>(TaskState::kFinished)]);
  EXPECT_EQ(v.total.not_queued + v.total.queued,
            raw[static_cast<size_t>(TaskState::kNotQueued)] + raw[static_cast<size_t>(TaskState::kQueued)]);
  EXPECT_EQ(of(v, "f").finished, 2u);
  EXPECT_EQ(of(v, "g").finished, 1u);
  EXPECT_EQ(of(v, "g").queued, 1u);
  EXPECT_EQ(v.workers, 2u);
}

TEST_F(TaskReadinessTest, TheLastStartIsTheLatestOfRunningAndFinishedTasks) {
  apply({created(1, "f"), created(2, "f"), state(T::kStarted, 1, 0, 500), state(T::kFinished, 1, 0, 900)});
  EXPECT_EQ(refresh().last_start_ns, 500);
  apply({state(T::kStarted, 2, 1, 700)});
  EXPECT_EQ(refresh().last_start_ns, 700);
  apply({created(3, "f"), state(T::kStarted, 3, 1, 600), state(T::kFinished, 3, 1, 650)});
  EXPECT_EQ(refresh().last_start_ns, 700);
}

// Incremental: a refresh reads what the graph gained and what is still
// unfinished, not every task and edge again.
TEST_F(TaskReadinessTest, ARefreshReadsOnlyNewAndUnfinishedWork) {
  // A chain of 10,000 tasks, all run but the last 10.
  constexpr uint64_t kTasks = 10'000;
  for (uint64_t id = 1; id <= kTasks; ++id) {
    graph_.apply(created(id, "chain"));
    if (id > 1) graph_.apply(dependence(id - 1, id));
  }
  for (uint64_t id = 1; id <= kTasks - 10; ++id) {
    graph_.apply(state(T::kStarted, id));
    graph_.apply(state(T::kFinished, id));
  }
  TaskReadiness::View v = refresh();
  EXPECT_EQ(readiness_.lastWork().new_tasks, kTasks);
  EXPECT_EQ(readiness_.lastWork().new_edges, kTasks - 1);
  EXPECT_EQ(v.total.finished, kTasks - 10);
  EXPECT_EQ(v.total.queued, 1u);
  EXPECT_EQ(v.total.not_queued, 9u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{kTasks - 9}));

  v = refresh();
  EXPECT_EQ(readiness_.lastWork().new_tasks, 0u);
  EXPECT_EQ(readiness_.lastWork().new_edges, 0u);
  EXPECT_EQ(readiness_.lastWork().live_tasks, 10u);
  EXPECT_EQ(readiness_.lastWork().pending_edges, 9u);
  EXPECT_EQ(v.total.finished, kTasks - 10);
  EXPECT_EQ(of(v, "chain").finished, kTasks - 10);

  graph_.apply(state(T::kStarted, kTasks - 9));
  graph_.apply(state(T::kFinished, kTasks - 9));
  v = refresh();
  EXPECT_EQ(readiness_.lastWork().live_tasks, 10u);  // looked at before it learnt one finished
  EXPECT_EQ(readiness_.lastWork().pending_edges, 8u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{kTasks - 8}));
  refresh();
  EXPECT_EQ(readiness_.lastWork().live_tasks, 9u);
}

TEST_F(TaskReadinessTest, AFreedOrSmallerGraphStartsItOver) {
  apply({created(1, "f"), created(2, "f"), dependence(1, 2)});
  refresh();
  graph_ = TaskGraph();
  apply({created(7, "g")});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(v.total.queued, 1u);
  EXPECT_EQ(v.total.not_queued, 0u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{7}));
}

// A windowed graph drops finished tasks: a predecessor it no longer holds
// has finished, whether its edge came before the drop or after.
TEST_F(TaskReadinessTest, ASuccessorOfADroppedPredecessorIsQueued) {
  graph_ = TaskGraph(100);
  apply({created(1, "p"), created(2, "s"), dependence(1, 2)});
  TaskReadiness::View v = refresh();
  EXPECT_EQ(of(v, "s").not_queued, 1u);
  apply({state(T::kStarted, 1), state(T::kFinished, 1)});
  for (uint64_t id = 10; id < 1010; ++id) apply({created(id, "filler"), state(T::kFinished, id)});
  ASSERT_EQ(graph_.find(1), nullptr);
  ASSERT_NE(graph_.find(2), nullptr);
  apply({created(5000, "late"), dependence(1, 5000)});
  v = refresh();
  EXPECT_EQ(of(v, "s").queued, 1u);
  EXPECT_EQ(of(v, "late").queued, 1u);
  EXPECT_EQ(v.ready, (std::vector<uint64_t>{2, 5000}));
  EXPECT_EQ(of(v, "p").finished, 1u);
  EXPECT_EQ(of(v, "filler").finished, 1000u);
  EXPECT_EQ(v.total.finished, graph_.countsByState()[static_cast<size_t>(TaskState::kFinished)]);
}

// Refreshed between compactions, a windowed graph's readiness shows what
// an unlimited graph's shows: the same counts, the same ready tasks in the
// same order.
TEST_F(TaskReadinessTest, AWindowedGraphReadsAsAnUnlimitedOne) {
  graph_ = TaskGraph(300);
  TaskGraph full;
  TaskReadiness full_readiness;
  uint64_t generations_seen = 0;
  for (uint64_t id = 1; id <= 6000; ++id) {
    std::vector<GraphEvent> events{created(id, id % 3 ? "a" : "b")};
    if (id > 2 && id % 4 != 0) events.push_back(dependence(id - 2, id));
    if (id > 40) {
      // Most tasks run and finish soon after; every 50th stays unfinished.
      const uint64_t old = id - 40;
      if (old % 50 != 0) {
        events.push_back(state(T::kStarted, old, static_cast<int32_t>(old % 2), static_cast<int64_t>(old)));
        events.push_back(state(T::kFinished, old));
      }
    }
    for (const GraphEvent& e : events) {
      graph_.apply(e);
      full.apply(e);
    }
    if (id % 97 != 0) continue;
    const uint64_t generation = graph_.generation();
    TaskReadiness::View v = refresh(1000);
    TaskReadiness::Blocked none{&blocked_, std::vector<bool>(full.functions().size(), false)};
    TaskReadiness::View u = full_readiness.refresh(full, none, 1000);
    if (generation != 0 && generation != generations_seen) {
      generations_seen = generation;
      EXPECT_EQ(readiness_.lastWork().new_tasks, graph_.tasks().size());  // read again, once
    }
    ASSERT_EQ(v.ready, u.ready) << "after task " << id;
    EXPECT_EQ(v.ready_total, u.ready_total);
    EXPECT_EQ(v.total.queued, u.total.queued);
    EXPECT_EQ(v.total.not_queued, u.total.not_queued);
    EXPECT_EQ(v.total.running, u.total.running);
    EXPECT_EQ(v.total.finished, u.total.finished);
    ASSERT_EQ(v.by_function.size(), u.by_function.size());
    for (size_t f = 0; f < u.by_function.size(); ++f) {
      EXPECT_EQ(v.by_function[f].queued, u.by_function[f].queued);
      EXPECT_EQ(v.by_function[f].finished, u.by_function[f].finished);
    }
    EXPECT_EQ(v.workers, u.workers);
    EXPECT_EQ(v.last_start_ns, u.last_start_ns);
  }
  EXPECT_GT(graph_.generation(), 5u);
  EXPECT_GT(graph_.tasksDropped(), 4000u);
}

}  // namespace
}  // namespace nk
