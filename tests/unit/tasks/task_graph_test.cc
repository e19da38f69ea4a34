#include "taskgraph/task_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

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

// The window drops finished tasks only: a client that never finishes its
// tasks grew the graph without end (5 M of them held 314 MB in a 1 M
// window). Past four windows, new tasks are counted, not held, nor their
// edges and states; the held ones work as before, and once they finish the
// window drops them and new tasks are held again.
TEST(TaskGraph, UnfinishedTasksAreHeldUpToFourWindows) {
  TaskGraph g(100);
  EXPECT_EQ(g.maxHeld(), 400u);
  for (uint64_t i = 1; i <= 1000; ++i) g.apply(created(i, 0, "open"));
  EXPECT_EQ(g.tasks().size(), 400u);
  EXPECT_EQ(g.tasksNotHeld(), 600u);
  EXPECT_EQ(g.totalTasks(), 1000u);
  g.apply(dependence(1, 900, 0x10));  // into a task not held: no edge
  g.apply(state(T::kFinished, 900, 5));  // nor a placeholder
  EXPECT_EQ(g.tasks().size(), 400u);
  EXPECT_EQ(g.totalEdges(), 0u);
  EXPECT_EQ(g.find(900), nullptr);
  g.apply(dependence(1, 2, 0x10));  // between held ones, as ever
  EXPECT_EQ(g.totalEdges(), 1u);
  // The next compaction comes within a quarter of what it would read.
  for (uint64_t i = 1; i <= 400; ++i) g.apply(state(T::kFinished, i, 10));
  for (uint64_t i = 2001; i <= 2200; ++i) g.apply(created(i, 0, "later"));
  for (uint64_t i = 2101; i <= 2200; ++i) ASSERT_NE(g.find(i), nullptr) << i;
  EXPECT_LE(g.tasksNotHeld(), 700u);
  EXPECT_LE(g.tasks().size(), 400u);
  // Refused creations cost O(1) each: compactions do not read the full
  // graph again for every one.
  TaskGraph full(1000);
  for (uint64_t i = 1; i <= 200'000; ++i) full.apply(created(i, 0, "open"));
  EXPECT_EQ(full.tasksNotHeld(), 196'000u);
  EXPECT_LT(full.compactionReads(), 20u * 200'000u) << full.compactionReads();
}

// Ids are the client's to choose. Spread out (each up to 65,000 past the
// last in one thread's slot), they made the graph keep a table of gaps per
// task: 426 KB a task, 8.5 GB for these 20,000. They cost no more than any
// other task now, and each still finds its own.
TEST(TaskGraph, IdsFarApartCostNoMoreThanOthers) {
  const uint64_t slot = uint64_t{1} << 40;
  for (uint64_t stride : {uint64_t{3}, uint64_t{1000}, uint64_t{65'000}}) {
    SCOPED_TRACE(stride);
    TaskGraph g;
    constexpr uint64_t n = 20'000;
    for (uint64_t i = 1; i <= n; ++i) g.apply(created(slot | (i * stride), 0, "f"));
    ASSERT_EQ(g.tasks().size(), n);
    for (uint64_t i = 1; i <= n; ++i) {
      const TaskGraph::Task* t = g.find(slot | (i * stride));
      ASSERT_NE(t, nullptr) << i;
      ASSERT_EQ(t->id, slot | (i * stride));
    }
    EXPECT_EQ(g.find(slot | (n * stride + 1)), nullptr);
    const double per_task = static_cast<double>(g.approximateBytes()) / n;
    EXPECT_LT(per_task, 200.0) << per_task << " bytes per task";
  }
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

namespace nk {
namespace {

using Deps = std::vector<std::pair<uint64_t, uint8_t>>;

Deps dependencesOf(const TaskGraph& g, const TaskGraph::Edge& e) {
  std::vector<TaskGraph::Dependence> out;
  g.dependencesOf(e, out);
  Deps deps;
  for (const auto& d : out) deps.emplace_back(d.address, d.kind);
  EXPECT_EQ(g.dependenceCount(e), deps.size());
  return deps;
}

// The graph as a plain map, for comparing against the reference.
std::map<std::pair<uint64_t, uint64_t>, Deps> pairsOf(const TaskGraph& g) {
  std::map<std::pair<uint64_t, uint64_t>, Deps> pairs;
  for (const auto& e : g.edges()) {
    auto [it, inserted] = pairs.emplace(std::pair{e.from, e.to}, dependencesOf(g, e));
    EXPECT_TRUE(inserted) << "pair " << e.from << " -> " << e.to << " twice";
  }
  return pairs;
}

// Three shared addresses are one edge carrying three dependences, in the
// order they came.
TEST(TaskGraph, APairSharingAddressesIsOneEdge) {
  TaskGraph g;
  g.apply(dependence(1, 2, 0x10, 1));
  g.apply(dependence(1, 2, 0x20, 3));
  g.apply(dependence(1, 2, 0x30, 4));
  g.apply(dependence(3, 2, 0x10, 1));
  ASSERT_EQ(g.edges().size(), 2u);
  EXPECT_EQ(g.dependences(), 4u);
  EXPECT_EQ(dependencesOf(g, g.edges()[0]), (Deps{{0x10, 1}, {0x20, 3}, {0x30, 4}}));
  EXPECT_EQ(dependencesOf(g, g.edges()[1]), (Deps{{0x10, 1}}));
}

// Another successor's edges in between (another thread's batch) do not
// split a pair, nor does a successor with many predecessors.
TEST(TaskGraph, PairsMergeAcrossInterruptedRunsAndLongRuns) {
  TaskGraph g;
  g.apply(dependence(1, 10, 0xa));
  g.apply(dependence(2, 10, 0xa));
  g.apply(dependence(1, 11, 0xb));  // 10's run is interrupted
  g.apply(dependence(2, 10, 0xc));  // ... and merges all the same
  g.apply(dependence(1, 10, 0xd));
  g.apply(dependence(3, 10, 0xd));  // a new pair of 10, away from its others
  g.apply(dependence(3, 10, 0xe));
  for (uint64_t from = 100; from < 200; ++from) g.apply(dependence(from, 12, 0x1));
  for (uint64_t from = 100; from < 200; ++from) g.apply(dependence(from, 12, 0x2));
  auto pairs = pairsOf(g);
  EXPECT_EQ(pairs.size(), 4u + 100u);
  EXPECT_EQ((pairs[{1, 10}]), (Deps{{0xa, 3}, {0xd, 3}}));
  EXPECT_EQ((pairs[{2, 10}]), (Deps{{0xa, 3}, {0xc, 3}}));
  EXPECT_EQ((pairs[{3, 10}]), (Deps{{0xd, 3}, {0xe, 3}}));
  EXPECT_EQ((pairs[{150, 12}]), (Deps{{0x1, 3}, {0x2, 3}}));
  EXPECT_EQ(g.dependences(), 7u + 200u);
}

// Against a map, in orders from friendly (each successor's dependences
// together) to hostile (every successor coming back after all others,
// which ends in indexing every pair): always exact.
TEST(TaskGraph, PairsMatchAReferenceInAnyOrder) {
  for (int interleave : {0, 1, 3, 50, 1000}) {
    std::mt19937_64 random(static_cast<uint64_t>(interleave) + 7);
    std::vector<GraphEvent> events;
    for (uint64_t to = 1000; to < 1600; ++to) {
      const int n = static_cast<int>(random() % 24);
      for (int i = 0; i < n; ++i) {
        const uint64_t from = 1 + random() % (random() % 4 == 0 ? 200 : 6);
        events.push_back(dependence(from, to, 0x1000 + random() % 40, static_cast<uint8_t>(1 + random() % 5)));
      }
    }
    // Swap events up to `interleave` apart.
    for (size_t i = 0; interleave > 0 && i + 1 < events.size(); ++i)
      std::swap(events[i], events[std::min(events.size() - 1, i + random() % static_cast<size_t>(interleave))]);
    TaskGraph g;
    std::map<std::pair<uint64_t, uint64_t>, Deps> expected;
    for (const GraphEvent& e : events) {
      g.apply(e);
      expected[{e.from, e.task}].emplace_back(e.address, e.kind);
    }
    EXPECT_EQ(pairsOf(g), expected) << "interleave " << interleave;
    EXPECT_EQ(g.dependences(), events.size());
    EXPECT_EQ(g.rejected(), 0u);
  }
}

}  // namespace
}  // namespace nk
