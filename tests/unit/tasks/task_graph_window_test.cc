// TaskGraph with a window (max_tasks): finished tasks dropped, totals kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "taskgraph/task_graph.h"

namespace nk {
namespace {

using T = GraphEvent::Type;

GraphEvent created(uint64_t task, uint64_t parent, std::string_view function) {
  GraphEvent e;
  e.type = T::kCreated;
  e.task = task;
  e.parent = parent;
  e.function = function;
  e.timestamp_ns = 1;
  return e;
}
GraphEvent dependence(uint64_t from, uint64_t to, uint64_t address = 0x1000, uint8_t kind = 3) {
  GraphEvent e;
  e.type = T::kDependence;
  e.from = from;
  e.task = to;
  e.address = address;
  e.kind = kind;
  return e;
}
GraphEvent state(T type, uint64_t task, int64_t ts = 0, int32_t thread = 0) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.timestamp_ns = ts;
  e.thread = thread;
  return e;
}
// Ids as libnodekeeper makes them.
uint64_t id(uint64_t slot, uint64_t serial) { return (slot << 40) | serial; }
uint64_t finished(const TaskGraph& g) { return g.countsByState()[static_cast<size_t>(TaskState::kFinished)]; }

// A UTS-like tree over two thread slots: each task creates its children,
// runs and finishes once they have (so the root finishes last), plus a
// dependence chain between siblings.
std::vector<GraphEvent> treeEvents(uint64_t tasks) {
  std::vector<GraphEvent> out;
  uint64_t serial[2] = {0, 0};
  uint64_t made = 0;
  std::vector<uint64_t> path;  // the unfinished ancestors
  int64_t ts = 1;
  auto make = [&](uint64_t parent) {
    const uint64_t slot = made % 2;
    const uint64_t task = id(slot + 1, ++serial[slot]);
    ++made;
    out.push_back(created(task, parent, made % 3 ? "node" : "leaf"));
    out.push_back(state(T::kStarted, task, ++ts, static_cast<int32_t>(slot)));
    return task;
  };
  path.push_back(make(0));
  while (made < tasks) {
    uint64_t previous = 0;
    const uint64_t children = 1 + made % 4;
    for (uint64_t c = 0; c < children && made < tasks; ++c) {
      const uint64_t child = make(path.back());
      if (previous != 0) out.push_back(dependence(previous, child, 0x100 + c));
      if (c + 1 == children && path.size() < 40) {
        path.push_back(child);  // goes deeper
      } else {
        out.push_back(state(T::kFinished, child, ++ts));
      }
      previous = child;
    }
    if (path.size() > 1 && made % 7 == 0) {
      out.push_back(state(T::kFinished, path.back(), ++ts));
      path.pop_back();
    }
  }
  while (!path.empty()) {
    out.push_back(state(T::kFinished, path.back(), ++ts));
    path.pop_back();
  }
  return out;
}

bool sameStats(const TaskGraph::FunctionStats& a, const TaskGraph::FunctionStats& b) {
  return a.runs == b.runs && a.total_ns == b.total_ns && a.min_ns == b.min_ns && a.max_ns == b.max_ns &&
         a.finished == b.finished;
}

void expectSameTotals(const TaskGraph& windowed, const TaskGraph& full) {
  EXPECT_EQ(windowed.totalTasks(), full.tasks().size());
  EXPECT_EQ(windowed.totalEdges(), full.edges().size());
  EXPECT_EQ(windowed.dependences(), full.dependences());
  EXPECT_EQ(windowed.countsByState(), full.countsByState());
  EXPECT_EQ(windowed.functions(), full.functions());
  ASSERT_EQ(windowed.functionStats().size(), full.functionStats().size());
  for (size_t f = 0; f < full.functionStats().size(); ++f)
    EXPECT_TRUE(sameStats(windowed.functionStats()[f], full.functionStats()[f])) << "function " << f;
}

TEST(TaskGraphWindow, DroppingFinishedTasksKeepsTheTotalsOfAnUnlimitedGraph) {
  const std::vector<GraphEvent> events = treeEvents(20'000);
  TaskGraph windowed(1000), full;
  for (size_t i = 0; i < events.size(); ++i) {
    windowed.apply(events[i]);
    full.apply(events[i]);
    if (i == events.size() / 2) expectSameTotals(windowed, full);  // midway, with tasks running
  }
  expectSameTotals(windowed, full);
  EXPECT_GT(windowed.tasksDropped(), 18'000u);
  EXPECT_GT(windowed.edgesDropped(), 0u);
  EXPECT_LE(windowed.tasks().size(), 1000u);
  EXPECT_GT(windowed.generation(), 0u);
  EXPECT_EQ(windowed.lateEvents(), 0u);
  EXPECT_EQ(full.tasksDropped(), 0u);
  EXPECT_EQ(full.generation(), 0u);
  // What is held is what the unlimited graph has, and found where it is.
  for (size_t i = 0; i < windowed.tasks().size(); ++i) {
    const TaskGraph::Task& t = windowed.tasks()[i];
    ASSERT_EQ(windowed.indexOf(t.id), i);
    const TaskGraph::Task* u = full.find(t.id);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(t.state, u->state);
    EXPECT_EQ(t.parent, u->parent);
    EXPECT_EQ(windowed.functions()[t.function], full.functions()[u->function]);
  }
  EXPECT_EQ(windowed.find(id(2, 1)), nullptr);  // the root's first child
  EXPECT_TRUE(windowed.wasDropped(id(2, 1)));
  EXPECT_FALSE(full.wasDropped(id(2, 1)));
  EXPECT_FALSE(windowed.wasDropped(id(1, 1'000'000)));  // never seen
}

TEST(TaskGraphWindow, UnfinishedTasksAreNeverDroppedSoTheWindowIsSoft) {
  TaskGraph g(100);
  for (uint64_t s = 1; s <= 300; ++s) g.apply(created(id(1, s), 0, "open"));
  for (uint64_t s = 1; s <= 1000; ++s) {
    g.apply(created(id(2, s), 0, "done"));
    g.apply(state(T::kFinished, id(2, s)));
  }
  for (uint64_t s = 1; s <= 300; ++s) ASSERT_NE(g.find(id(1, s)), nullptr) << s;
  EXPECT_GE(g.tasks().size(), 300u);
  EXPECT_LT(g.tasks().size(), 300u + 100u);
  EXPECT_EQ(g.totalTasks(), 1300u);
  for (uint64_t s = 1; s <= 300; ++s) g.apply(state(T::kFinished, id(1, s)));
  for (uint64_t s = 1001; s <= 1200; ++s) {
    g.apply(created(id(2, s), 0, "done"));
    g.apply(state(T::kFinished, id(2, s)));
  }
  EXPECT_LE(g.tasks().size(), 100u);
  EXPECT_EQ(g.find(id(1, 1)), nullptr);  // the oldest went first
  EXPECT_EQ(finished(g), 1500u);
}

TEST(TaskGraphWindow, LateEventsForADroppedTaskMakeNoPlaceholder) {
  TaskGraph g(100);
  for (uint64_t s = 1; s <= 1000; ++s) {
    g.apply(created(id(2, s), 0, "f"));
    g.apply(state(T::kStarted, id(2, s), 10));
    g.apply(state(T::kFinished, id(2, s), 20));
  }
  const uint64_t gone = id(2, 5);
  ASSERT_TRUE(g.wasDropped(gone));
  const size_t held = g.tasks().size();
  const auto counts = g.countsByState();
  const auto stats = g.functionStats();
  // Another thread's batch, carried in after the drop.
  g.apply(state(T::kQueued, gone));
  g.apply(state(T::kStarted, gone, 10));
  g.apply(state(T::kFinished, gone, 30));
  g.apply(created(id(3, 1), 0, "g"));
  g.apply(dependence(id(3, 1), gone));  // into the dropped task: nothing to order
  g.apply(dependence(gone, id(3, 1)));  // from it: kept, and it has finished
  EXPECT_EQ(g.find(gone), nullptr);
  EXPECT_EQ(g.lateEvents(), 4u);
  EXPECT_EQ(g.tasks().size(), held + 1);
  EXPECT_EQ(g.countsByState()[static_cast<size_t>(TaskState::kFinished)],
            counts[static_cast<size_t>(TaskState::kFinished)]);
  EXPECT_EQ(g.functionStats()[1].runs, stats[1].runs);
  ASSERT_FALSE(g.edges().empty());
  EXPECT_EQ(g.edges().back().from, gone);
  EXPECT_EQ(g.edges().back().to, id(3, 1));
  // A task of a slot not seen yet, whose start overtook its creation, is
  // a placeholder as ever; so is one below a slot's dropped serials that
  // was never created (the slot's creations come in order).
  g.apply(state(T::kStarted, id(4, 9)));
  EXPECT_NE(g.find(id(4, 9)), nullptr);
  g.apply(created(id(4, 9), 0, "h"));
  EXPECT_TRUE(g.find(id(4, 9))->created);
  EXPECT_EQ(g.lateEvents(), 4u);
}

TEST(TaskGraphWindow, IdsCreatedOutOfOrderAreNeverTakenForDropped) {
  // A runtime numbering tasks from several threads: creations arrive out
  // of order, so "below the highest dropped" says nothing.
  TaskGraph g(100);
  for (uint64_t s = 1; s <= 1000; ++s) {
    g.apply(created(s, 0, "f"));
    g.apply(state(T::kFinished, s));
  }
  g.apply(created(2000, 0, "f"));
  g.apply(created(1500, 0, "f"));  // late, below 2000
  g.apply(state(T::kStarted, 1500));
  g.apply(state(T::kStarted, 1700));  // its creation is still in flight
  ASSERT_NE(g.find(1700), nullptr);
  g.apply(created(1700, 0, "f"));
  EXPECT_TRUE(g.find(1700)->created);
  EXPECT_EQ(g.find(1500)->state, TaskState::kRunning);
  EXPECT_EQ(g.lateEvents(), 0u);
  EXPECT_FALSE(g.wasDropped(5));
}

// Ids of every shape (libnodekeeper's, small runtime ids, pointers, far
// slots), hashed or in tables, some held long: after each compaction every
// held task is found where it is, as in an unlimited graph.
TEST(TaskGraphWindow, IdsOfEveryShapeAreFoundAcrossCompactions) {
  std::mt19937_64 random(5);
  TaskGraph windowed(64), full;
  std::vector<uint64_t> open;
  uint64_t serials[4] = {0, 0, 0, 0};
  for (int i = 0; i < 20'000; ++i) {
    uint64_t task = 0;
    switch (random() % 4) {
      case 0: task = id(3, ++serials[0]); break;
      case 1: task = ++serials[1]; break;
      case 2: task = 0x7f0000000000 + (++serials[2]) * 4096; break;  // a pointer: hashed
      default: task = id(2000, ++serials[3]); break;                 // past the tables' slots
    }
    std::vector<GraphEvent> events{created(task, open.empty() ? 0 : open.back(), "f")};
    if (!open.empty() && random() % 3 == 0) events.push_back(dependence(open[random() % open.size()], task));
    if (random() % 10 == 0) {
      open.push_back(task);  // held until much later
    } else {
      events.push_back(state(T::kFinished, task));
    }
    if (open.size() > 30 || (!open.empty() && random() % 50 == 0)) {
      events.push_back(state(T::kFinished, open.front()));
      open.erase(open.begin());
    }
    for (const GraphEvent& e : events) {
      windowed.apply(e);
      full.apply(e);
    }
    for (size_t p = 0; p < windowed.tasks().size(); ++p) {
      const TaskGraph::Task& t = windowed.tasks()[p];
      ASSERT_EQ(windowed.indexOf(t.id), p) << "task " << t.id << " after event " << i;
      ASSERT_EQ(t.state, full.find(t.id)->state);
    }
    for (uint64_t o : open) ASSERT_NE(windowed.find(o), nullptr) << o;
  }
  expectSameTotals(windowed, full);
  EXPECT_GT(windowed.generation(), 100u);
}

using Deps = std::vector<std::pair<uint64_t, uint8_t>>;
std::map<std::pair<uint64_t, uint64_t>, Deps> pairsOf(const TaskGraph& g) {
  std::map<std::pair<uint64_t, uint64_t>, Deps> out;
  std::vector<TaskGraph::Dependence> deps;
  for (const TaskGraph::Edge& e : g.edges()) {
    if ((e.to >> 40) == 3) continue;  // a filler's, dropped or not
    g.dependencesOf(e, deps);
    Deps& d = out[{e.from, e.to}];
    EXPECT_TRUE(d.empty()) << "pair " << e.from << " -> " << e.to << " twice";
    for (const auto& x : deps) d.emplace_back(x.address, x.kind);
  }
  return out;
}

// Successors that stay unfinished keep their edges, exact, while their
// predecessors and the tasks around them are dropped between their
// dependences, in friendly and hostile orders.
TEST(TaskGraphWindow, PairsOfHeldSuccessorsStayExactAcrossCompactions) {
  for (int interleave : {0, 3, 1000}) {
    std::mt19937_64 random(static_cast<uint64_t>(interleave) + 11);
    std::vector<GraphEvent> events;
    uint64_t filler = 0;
    for (uint64_t to = 1; to <= 600; ++to) events.push_back(created(id(1, to), 0, "successor"));
    for (uint64_t from = 1; from <= 300; ++from) {
      events.push_back(created(id(2, from), 0, "predecessor"));
      events.push_back(state(T::kFinished, id(2, from)));
    }
    std::vector<GraphEvent> deps;
    for (uint64_t to = 1; to <= 600; ++to) {
      const int n = static_cast<int>(random() % 24);
      for (int i = 0; i < n; ++i)
        deps.push_back(dependence(id(2, 1 + random() % (random() % 4 == 0 ? 300 : 6)), id(1, to),
                                  0x1000 + random() % 40, static_cast<uint8_t>(1 + random() % 5)));
    }
    for (size_t i = 0; interleave > 0 && i + 1 < deps.size(); ++i)
      std::swap(deps[i], deps[std::min(deps.size() - 1, i + random() % static_cast<size_t>(interleave))]);
    std::map<std::pair<uint64_t, uint64_t>, Deps> expected;
    for (const GraphEvent& d : deps) {
      events.push_back(d);
      expected[{d.from, d.task}].emplace_back(d.address, d.kind);
      if (random() % 3 == 0) {  // finished tasks around them, to drop, some with pairs of their own
        events.push_back(created(id(3, ++filler), 0, "filler"));
        if (filler % 2 == 0) {
          events.push_back(dependence(id(2, 1 + filler % 300), id(3, filler), 0x1));
          events.push_back(dependence(id(2, 1 + filler % 300), id(3, filler), 0x2));
        }
        events.push_back(state(T::kFinished, id(3, filler)));
      }
    }
    TaskGraph g(700);
    for (const GraphEvent& e : events) g.apply(e);
    EXPECT_GT(g.generation(), 2u) << "interleave " << interleave;
    EXPECT_EQ(g.find(id(2, 1)), nullptr);
    EXPECT_EQ(pairsOf(g), expected) << "interleave " << interleave;
    EXPECT_EQ(g.dependences(), deps.size() + 2 * (filler / 2));
    EXPECT_EQ(g.lateEvents(), 0u);
  }
}

// What compactions read stays within a constant of the events applied,
// however many tasks stay unfinished and however many edges they keep.
TEST(TaskGraphWindow, CompactionsStayLinearInHostileOrders) {
  {
    TaskGraph g(1000);
    uint64_t events = 0;
    // Three windows' worth, within the four the graph holds at the most.
    for (uint64_t s = 1; s <= 3'000; ++s, ++events) g.apply(created(id(1, s), 0, "open"));
    for (uint64_t s = 1; s <= 200'000; ++s, events += 2) {
      g.apply(created(id(2, s), 0, "done"));
      g.apply(state(T::kFinished, id(2, s)));
    }
    EXPECT_GT(g.tasksDropped(), 190'000u);
    EXPECT_LT(g.compactionReads(), 8 * events) << g.compactionReads() << " reads for " << events << " events";
  }
  {
    // One unfinished task after 100,000 finished predecessors (a writer
    // after many readers): its edges stay, and are not read again and again.
    TaskGraph g(1000);
    uint64_t events = 1;
    g.apply(created(id(1, 1), 0, "writer"));
    for (uint64_t s = 1; s <= 100'000; ++s, events += 3) {
      g.apply(created(id(2, s), 0, "reader"));
      g.apply(state(T::kFinished, id(2, s)));
      g.apply(dependence(id(2, s), id(1, 1)));
    }
    for (uint64_t s = 1; s <= 200'000; ++s, events += 2) {
      g.apply(created(id(3, s), 0, "after"));
      g.apply(state(T::kFinished, id(3, s)));
    }
    EXPECT_EQ(g.edges().size(), 100'000u);
    // Held edges make compactions rarer: the graph grows by a quarter of
    // them between two.
    EXPECT_LE(g.tasks().size(), 1000u + g.edges().size() / 4);
    EXPECT_LT(g.compactionReads(), 8 * events) << g.compactionReads() << " reads for " << events << " events";
  }
}

// A tree's root holds its slot's first serial to the end: the slot's table
// must not keep every serial since.
TEST(TaskGraphWindow, MemoryGoesDownWithTheWindow) {
  constexpr uint64_t kTasks = 1'000'000;
  TaskGraph windowed(10'000), full;
  for (TaskGraph* g : {&windowed, &full}) {
    g->apply(created(id(1, 1), 0, "root"));
    for (uint64_t s = 2; s <= kTasks; ++s) {
      g->apply(created(id(1, s), id(1, 1), "chain"));
      if (s > 2) g->apply(dependence(id(1, s - 1), id(1, s)));
      g->apply(state(T::kStarted, id(1, s), 1));
      g->apply(state(T::kFinished, id(1, s), 2));
    }
  }
  EXPECT_NE(windowed.find(id(1, 1)), nullptr);
  EXPECT_EQ(windowed.totalTasks(), kTasks);
  EXPECT_LE(windowed.tasks().size(), 10'000u);
  const size_t small = windowed.approximateBytes(), big = full.approximateBytes();
  EXPECT_LT(small, 2'000'000u) << small << " bytes";
  EXPECT_GT(big, 50'000'000u) << big << " bytes";
}

}  // namespace
}  // namespace nk
