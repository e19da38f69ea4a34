#include "taskgraph/task_graph_summary.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace nk {
namespace {

using T = GraphEvent::Type;

GraphEvent created(uint64_t task, std::string_view function, uint64_t parent = 0) {
  GraphEvent e;
  e.type = T::kCreated;
  e.task = task;
  e.parent = parent;
  e.function = function;
  e.timestamp_ns = 1;
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
GraphEvent state(T type, uint64_t task, int64_t ts = 10) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.timestamp_ns = ts;
  e.thread = 0;
  return e;
}

constexpr size_t kNotQueued = static_cast<size_t>(TaskState::kNotQueued);
constexpr size_t kQueued = static_cast<size_t>(TaskState::kQueued);
constexpr size_t kRunning = static_cast<size_t>(TaskState::kRunning);
constexpr size_t kFinished = static_cast<size_t>(TaskState::kFinished);

const TaskGraphSummary::FunctionCounts* functionNamed(const TaskGraphSummary& s, const std::string& name) {
  for (const auto& f : s.functions)
    if (f.function == name) return &f;
  return nullptr;
}

std::vector<std::string> functionNames(const TaskGraphSummary& s) {
  std::vector<std::string> out;
  for (const auto& f : s.functions) out.push_back(f.function);
  return out;
}

TEST(TaskGraphSummaryTest, EmptyGraphHasNothing) {
  TaskGraph graph;
  TaskGraphSummary s = TaskGraphSummary::of(graph, {}, 10);
  EXPECT_EQ(s.by_state, (std::array<uint64_t, 5>{}));
  EXPECT_TRUE(s.functions.empty());  // the unknown function (index 0) is left out
  EXPECT_TRUE(s.ready.empty());
  EXPECT_TRUE(TaskGraphSummary::notStarted(graph, "a").empty());
}

TEST(TaskGraphSummaryTest, CountsByStateAndPerFunctionInOrderMet) {
  TaskGraph graph;
  // b is met first, then a.
  graph.apply(created(1, "b"));
  graph.apply(created(2, "a"));
  graph.apply(created(3, "a"));
  graph.apply(created(4, "b"));
  graph.apply(created(5, "a"));
  graph.apply(state(T::kQueued, 2));
  graph.apply(state(T::kStarted, 3));
  graph.apply(state(T::kStarted, 4, 10));
  graph.apply(state(T::kFinished, 4, 20));
  graph.apply(state(T::kStarted, 5, 10));
  graph.apply(state(T::kFailed, 5, 20));  // failed counts as finished

  TaskGraphSummary s = TaskGraphSummary::of(graph, {}, 100);
  EXPECT_EQ(s.by_state[kNotQueued], 1u);  // 1
  EXPECT_EQ(s.by_state[kQueued], 1u);     // 2
  EXPECT_EQ(s.by_state[kRunning], 1u);    // 3
  EXPECT_EQ(s.by_state[kFinished], 2u);   // 4, 5
  EXPECT_EQ(s.by_state[0], 0u);

  ASSERT_EQ(functionNames(s), (std::vector<std::string>{"b", "a"}));
  const auto* b = functionNamed(s, "b");
  const auto* a = functionNamed(s, "a");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->by_state, (std::array<uint64_t, 5>{0, 1, 0, 0, 1}));
  EXPECT_EQ(a->by_state, (std::array<uint64_t, 5>{0, 0, 1, 1, 1}));
}

TEST(TaskGraphSummaryTest, UnnamedTasksShownAsUnnamedFirst) {
  TaskGraph graph;
  graph.apply(created(1, "work"));
  graph.apply(created(2, ""));
  graph.apply(created(3, ""));
  graph.apply(state(T::kStarted, 3));
  TaskGraphSummary s = TaskGraphSummary::of(graph, {}, 100);
  ASSERT_EQ(functionNames(s), (std::vector<std::string>{"(unnamed)", "work"}));
  EXPECT_EQ(s.functions[0].by_state, (std::array<uint64_t, 5>{0, 1, 0, 1, 0}));
  EXPECT_EQ(s.functions[1].by_state, (std::array<uint64_t, 5>{0, 1, 0, 0, 0}));
  // Nothing is left with an empty name.
  EXPECT_EQ(functionNamed(s, ""), nullptr);
}

TEST(TaskGraphSummaryTest, NoUnnamedEntryWhenEveryTaskHasAName) {
  TaskGraph graph;
  graph.apply(created(1, "work"));
  graph.apply(created(2, "other"));
  TaskGraphSummary s = TaskGraphSummary::of(graph, {}, 100);
  EXPECT_EQ(functionNames(s), (std::vector<std::string>{"work", "other"}));
}

TEST(TaskGraphSummaryTest, PlaceholderTasksCountAsUnnamed) {
  // As the code behaves: a task known only from a dependence (not created
  // yet) has the unknown function and is counted under "(unnamed)", like
  // it is in by_state.
  TaskGraph graph;
  graph.apply(created(1, "work"));
  graph.apply(dependence(1, 2));  // 2: a placeholder
  TaskGraphSummary s = TaskGraphSummary::of(graph, {}, 100);
  EXPECT_EQ(s.by_state[kNotQueued], 2u);
  ASSERT_EQ(functionNames(s), (std::vector<std::string>{"(unnamed)", "work"}));
  EXPECT_EQ(s.functions[0].by_state[kNotQueued], 1u);
  // ...but it is not ready: it has not been created.
  EXPECT_EQ(s.ready, (std::vector<uint64_t>{1}));
}

TEST(TaskGraphSummaryTest, ReadyTasksAreCreatedNotStartedWithFinishedPredecessors) {
  TaskGraph graph;
  graph.apply(created(1, "a"));  // finished
  graph.apply(created(2, "a"));  // depends on 1 (finished): ready
  graph.apply(created(3, "a"));  // depends on 2 (not finished): waiting
  graph.apply(created(4, "a"));  // running: not ready
  graph.apply(created(5, "a"));  // queued, no predecessor: ready
  graph.apply(created(6, "a"));  // depends on 1 and 4 (4 running): waiting
  graph.apply(created(7, "a"));  // no predecessor: ready
  graph.apply(dependence(1, 2));
  graph.apply(dependence(2, 3));
  graph.apply(dependence(1, 6));
  graph.apply(dependence(4, 6));
  graph.apply(state(T::kStarted, 1, 10));
  graph.apply(state(T::kFinished, 1, 20));
  graph.apply(state(T::kStarted, 4));
  graph.apply(state(T::kQueued, 5));

  TaskGraphSummary s = TaskGraphSummary::of(graph, {}, 100);
  EXPECT_EQ(s.ready, (std::vector<uint64_t>{2, 5, 7}));

  // Once 4 finishes, 6 is ready too; once 2 runs, it no longer is.
  graph.apply(state(T::kFinished, 4, 30));
  graph.apply(state(T::kStarted, 2, 31));
  s = TaskGraphSummary::of(graph, {}, 100);
  EXPECT_EQ(s.ready, (std::vector<uint64_t>{5, 6, 7}));
}

TEST(TaskGraphSummaryTest, PredecessorThatFailedCountsAsFinished) {
  TaskGraph graph;
  graph.apply(created(1, "a"));
  graph.apply(created(2, "a"));
  graph.apply(dependence(1, 2));
  graph.apply(state(T::kStarted, 1, 10));
  graph.apply(state(T::kFailed, 1, 20));
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 10).ready, (std::vector<uint64_t>{2}));
}

TEST(TaskGraphSummaryTest, PredecessorNotYetCreatedKeepsSuccessorWaiting) {
  TaskGraph graph;
  graph.apply(created(2, "a"));
  graph.apply(dependence(1, 2));  // 1 is a placeholder, not finished
  EXPECT_TRUE(TaskGraphSummary::of(graph, {}, 10).ready.empty());
  graph.apply(created(1, "a"));
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 10).ready, (std::vector<uint64_t>{1}));
}

TEST(TaskGraphSummaryTest, BlockedTasksAreNotReady) {
  TaskGraph graph;
  for (uint64_t id = 1; id <= 4; ++id) graph.apply(created(id, "a"));
  TaskGraphSummary s = TaskGraphSummary::of(graph, {2, 4, 99}, 10);
  EXPECT_EQ(s.ready, (std::vector<uint64_t>{1, 3}));
  // Blocking does not change the counts.
  EXPECT_EQ(s.by_state[kNotQueued], 4u);
}

TEST(TaskGraphSummaryTest, ReadyListIsLimitedOldestFirst) {
  TaskGraph graph;
  for (uint64_t id = 10; id <= 20; ++id) graph.apply(created(id, "a"));
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 3).ready, (std::vector<uint64_t>{10, 11, 12}));
  EXPECT_TRUE(TaskGraphSummary::of(graph, {}, 0).ready.empty());
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 1000).ready.size(), 11u);
  // Blocked and started tasks do not use up the limit.
  graph.apply(state(T::kStarted, 10));
  EXPECT_EQ(TaskGraphSummary::of(graph, {11}, 3).ready, (std::vector<uint64_t>{12, 13, 14}));
  // The counts are complete whatever the limit.
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 1).by_state[kNotQueued], 10u);
}

TEST(TaskGraphSummaryTest, LargeIdsWork) {
  TaskGraph graph;
  const uint64_t big = (uint64_t{3} << 40) | 7;  // a thread slot and a serial
  const uint64_t pointer = 0x7f00deadbeef;
  graph.apply(created(big, "a"));
  graph.apply(created(pointer, "a"));
  graph.apply(dependence(big, pointer));
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 10).ready, (std::vector<uint64_t>{big}));
  graph.apply(state(T::kStarted, big, 10));
  graph.apply(state(T::kFinished, big, 20));
  EXPECT_EQ(TaskGraphSummary::of(graph, {}, 10).ready, (std::vector<uint64_t>{pointer}));
}

TEST(TaskGraphSummaryTest, NotStartedListsTheFunctionsTasksNotRunningOrFinished) {
  TaskGraph graph;
  graph.apply(created(1, "f"));
  graph.apply(created(2, "g"));
  graph.apply(created(3, "f"));
  graph.apply(created(4, "f"));
  graph.apply(created(5, "f"));
  graph.apply(created(6, "f"));
  graph.apply(state(T::kQueued, 3));     // queued: not started
  graph.apply(state(T::kStarted, 4));    // running
  graph.apply(state(T::kStarted, 5, 10));
  graph.apply(state(T::kFinished, 5, 20));
  graph.apply(dependence(1, 6));  // waiting on a predecessor: still not started

  EXPECT_EQ(TaskGraphSummary::notStarted(graph, "f"), (std::vector<uint64_t>{1, 3, 6}));
  EXPECT_EQ(TaskGraphSummary::notStarted(graph, "g"), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(TaskGraphSummary::notStarted(graph, "h").empty());
  // Names match exactly.
  EXPECT_TRUE(TaskGraphSummary::notStarted(graph, "F").empty());
  EXPECT_TRUE(TaskGraphSummary::notStarted(graph, "f ").empty());
}

TEST(TaskGraphSummaryTest, NotStartedDoesNotMatchTheUnnamedLabel) {
  // As the code behaves: "(unnamed)" is only a label of the summary; the
  // graph's unknown function is the empty name.
  TaskGraph graph;
  graph.apply(created(1, ""));
  graph.apply(created(2, "f"));
  EXPECT_TRUE(TaskGraphSummary::notStarted(graph, "(unnamed)").empty());
  EXPECT_EQ(TaskGraphSummary::notStarted(graph, ""), (std::vector<uint64_t>{1}));
}

}  // namespace
}  // namespace nk
