#include "taskgraph/task_graph.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

using T = GraphEvent::Type;

GraphEvent created(uint64_t task, uint64_t parent, std::string_view function, int64_t ts = 1) {
  GraphEvent e;
  e.type = T::kCreated;
  e.task = task;
  e.parent = parent;
  e.function = function;
  e.timestamp_ns = ts;
  return e;
}
GraphEvent dependence(uint64_t from, uint64_t to, uint64_t address, uint8_t kind = 3) {
  GraphEvent e;
  e.type = T::kDependence;
  e.from = from;
  e.task = to;
  e.address = address;
  e.kind = kind;
  return e;
}
GraphEvent state(T type, uint64_t task, int64_t ts, int32_t thread = -1) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.timestamp_ns = ts;
  e.thread = thread;
  return e;
}
uint64_t count(const TaskGraph& g, TaskState s) { return g.countsByState()[static_cast<size_t>(s)]; }

// Temanejo's Figure 2: two independent subtrees of ten tasks each.
TEST(TaskGraph, SeedFigureTwoGraph) {
  TaskGraph g;
  g.apply(created(1, 0, "main"));
  for (uint64_t i = 0; i < 20; ++i) g.apply(created(2 + i, 1, i % 2 ? "right" : "left"));
  for (uint64_t i = 2; i < 20; ++i) g.apply(dependence(i, i + 2, i % 2 ? 0x2000 : 0x1000));
  EXPECT_EQ(g.tasks().size(), 21u);
  EXPECT_EQ(g.edges().size(), 18u);
  EXPECT_EQ(g.functions().size(), 4u);  // "", main, left, right
  EXPECT_EQ(g.functions()[g.find(3)->function], "right");
  EXPECT_EQ(count(g, TaskState::kNotQueued), 21u);
  for (const auto& e : g.edges()) EXPECT_EQ(e.to - e.from, 2u);
}

TEST(TaskGraph, StatesMoveForwardOnlyAndCountsFollow) {
  TaskGraph g;
  g.apply(created(7, 0, "f"));
  g.apply(state(T::kQueued, 7, 10));
  g.apply(state(T::kStarted, 7, 20, 3));
  EXPECT_EQ(count(g, TaskState::kRunning), 1u);
  g.apply(state(T::kQueued, 7, 25));  // late: ignored
  EXPECT_EQ(g.find(7)->state, TaskState::kRunning);
  EXPECT_EQ(g.find(7)->thread, 3);
  g.apply(state(T::kFinished, 7, 120));
  EXPECT_EQ(count(g, TaskState::kFinished), 1u);
  EXPECT_EQ(count(g, TaskState::kRunning), 0u);
  EXPECT_EQ(count(g, TaskState::kQueued), 0u);
  const auto& s = g.functionStats()[g.find(7)->function];
  EXPECT_EQ(s.runs, 1u);
  EXPECT_EQ(s.total_ns, 100);
}

TEST(TaskGraph, OutOfOrderEventsMakePlaceholdersThatCreationFills) {
  TaskGraph g;
  g.apply(dependence(5, 6, 0x10));        // neither task seen yet
  g.apply(state(T::kStarted, 6, 50, 1));  // nor its creation
  ASSERT_NE(g.find(5), nullptr);
  EXPECT_FALSE(g.find(5)->created);
  g.apply(created(5, 1, "producer"));
  g.apply(created(6, 1, "consumer"));
  EXPECT_TRUE(g.find(6)->created);
  EXPECT_EQ(g.find(6)->state, TaskState::kRunning);  // creation does not reset it
  EXPECT_EQ(g.functions()[g.find(6)->function], "consumer");
  ASSERT_EQ(g.edges().size(), 1u);
  EXPECT_EQ(g.edges()[0].address, 0x10u);
}

TEST(TaskGraph, FailedTasksFinishAndAreMarked) {
  TaskGraph g;
  g.apply(created(1, 0, "f"));
  g.apply(state(T::kStarted, 1, 5));
  g.apply(state(T::kFailed, 1, 9));
  EXPECT_TRUE(g.find(1)->failed);
  EXPECT_EQ(g.find(1)->state, TaskState::kFinished);
  g.apply(state(T::kFinished, 1, 30));  // a second end does not count twice
  EXPECT_EQ(g.functionStats()[g.find(1)->function].runs, 1u);
}

TEST(TaskGraph, EventsWithoutATaskAreRejectedNotStored) {
  TaskGraph g;
  g.apply(created(0, 0, "f"));
  g.apply(dependence(0, 3, 1));
  EXPECT_EQ(g.rejected(), 2u);
  EXPECT_TRUE(g.tasks().empty());
}

// Issue 5's goal is under 200 bytes per live task; a task with one edge,
// as in a chain, counted from the containers.
TEST(TaskGraph, AMillionTasksWithOneEdgeEachFitTheBudget) {
  TaskGraph g;
  constexpr uint64_t n = 1'000'000;
  for (uint64_t i = 1; i <= n; ++i) {
    g.apply(created(i, 0, (i % 3) ? "work" : "reduce"));
    if (i > 1) g.apply(dependence(i - 1, i, 0x1000));
  }
  EXPECT_EQ(g.tasks().size(), n);
  double per_task = static_cast<double>(g.approximateBytes()) / n;
  EXPECT_LT(per_task, 200.0) << per_task << " bytes per task";
  EXPECT_GT(per_task, 56.0);  // at least the node itself: the count is not empty
}

}  // namespace
}  // namespace nk

namespace nk {
namespace {

// Ids of every shape the runtimes use: libnodekeeper's (slot << 40 |
// serial), small runtime ids, a far serial, pointers and the implicit bit;
// each finds its own task whichever table holds it.
TEST(TaskGraph, IdsOfEveryShapeFindTheirOwnTask) {
  TaskGraph g;
  const std::vector<uint64_t> ids = {
      1, 2, (uint64_t{5} << 40) | 3, (uint64_t{5} << 40) | 1, uint64_t{1} << 20, 0x7fff12345678, 0x7fff12345680,
      uint64_t{1} << 63 | 9, (uint64_t{2000} << 40) | 1, 3};
  for (size_t i = 0; i < ids.size(); ++i) g.apply(created(ids[i], 0, "f", static_cast<int64_t>(i + 1)));
  ASSERT_EQ(g.tasks().size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const TaskGraph::Task* t = g.find(ids[i]);
    ASSERT_NE(t, nullptr) << ids[i];
    EXPECT_EQ(t->id, ids[i]);
    EXPECT_EQ(t->created_ns, static_cast<int64_t>(i + 1)) << ids[i];
  }
  EXPECT_EQ(g.find(4), nullptr);
  EXPECT_EQ(g.find((uint64_t{5} << 40) | 2), nullptr);
  EXPECT_EQ(g.find(0x7fff12345679), nullptr);
  // A second event for each lands on the same task, not a new one.
  for (uint64_t id : ids) g.apply(dependence(1, id, 0x10));
  EXPECT_EQ(g.tasks().size(), ids.size());
  EXPECT_EQ(g.edges().size(), ids.size());
}

}  // namespace
}  // namespace nk
