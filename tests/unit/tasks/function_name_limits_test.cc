// Function names are the client's to send: the graph and the translator
// keep them within FunctionNameLimits, whatever a stream sends.
#include "taskgraph/function_name_limits.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "graph_event_batch.h"
#include "taskgraph/task_event_translator.h"
#include "taskgraph/task_graph.h"

namespace nk {
namespace {

namespace v1 = nodekeeper::v1;
using Limits = FunctionNameLimits;

GraphEvent created(uint64_t task, std::string_view function) {
  GraphEvent e;
  e.type = GraphEvent::Type::kCreated;
  e.task = task;
  e.function = function;
  return e;
}

TEST(FunctionNameLimits, ALongNameIsCutAtACharacterWithDots) {
  std::string scratch;
  const std::string fits(Limits::kMaxNameBytes, 'f');
  EXPECT_EQ(Limits::fit(fits, scratch), fits);
  // "é" is two bytes: the cut must not split one.
  std::string accented = "x";
  while (accented.size() < 2 * Limits::kMaxNameBytes) accented += "é";
  const std::string cut(Limits::fit(accented, scratch));
  EXPECT_LE(cut.size(), Limits::kMaxNameBytes);
  EXPECT_GE(cut.size(), Limits::kMaxNameBytes - 4);
  ASSERT_TRUE(cut.ends_with("...")) << cut.substr(cut.size() - 8);
  EXPECT_EQ(cut.substr(0, cut.size() - 3), accented.substr(0, cut.size() - 3));
  EXPECT_TRUE(cut.substr(0, cut.size() - 3).ends_with("é"));
}

// A name per task (made up, or a runtime labelling each task) grew the
// graph's names for as long as the program ran: a graph keeps 65,536, and
// counts the tasks of the rest under one entry.
TEST(FunctionNameLimits, AGraphKeepsSoManyNamesAndCountsTheRestTogether) {
  TaskGraph g(1000);  // a window: tasks go, names stayed
  const size_t extra = 1000;
  const size_t n = Limits::kMaxNames + extra;
  for (size_t i = 1; i <= n; ++i) {
    g.apply(created(i, "task " + std::to_string(i)));
    GraphEvent finished;
    finished.type = GraphEvent::Type::kFinished;
    finished.task = i;
    g.apply(finished);
  }
  EXPECT_EQ(g.totalTasks(), n);
  ASSERT_EQ(g.functions().size(), 1 + Limits::kMaxNames + 1);  // "" (unknown), the kept, the rest
  EXPECT_EQ(g.functions().back(), TaskGraph::kOtherFunctions);
  EXPECT_EQ(g.functionsNotKept(), extra);
  EXPECT_EQ(g.functions()[Limits::kMaxNames], "task " + std::to_string(Limits::kMaxNames));
  // A kept name is still found as itself, past the bound.
  g.apply(created(n + 1, "task 7"));
  EXPECT_EQ(g.functions()[g.find(n + 1)->function], "task 7");
  g.apply(created(n + 2, std::string(3 * Limits::kMaxNameBytes, 'y')));
  EXPECT_EQ(g.functions()[g.find(n + 2)->function], TaskGraph::kOtherFunctions);
  TaskGraph small;
  small.apply(created(1, std::string(3 * Limits::kMaxNameBytes, 'y')));
  EXPECT_EQ(small.functions()[small.find(1)->function].size(), Limits::kMaxNameBytes);
}

// A stream names at most 65,536 keys, in at most 4 MiB of text; a key past
// either is left unnamed (its tasks are "unknown") and counted.
TEST(FunctionNameLimits, AStreamKeepsSoManyNamesInSoManyBytes) {
  {
    TaskEventTranslator translator;
    std::vector<GraphEvent> events;
    const size_t n = Limits::kMaxNames + 10;
    ASSERT_EQ(translator.toGraphEvents(test::namesAndCreations(1, n, 0), events), "");
    ASSERT_EQ(events.size(), n);
    EXPECT_EQ(events[0].function, "f1");
    EXPECT_EQ(events[Limits::kMaxNames - 1].function, "f" + std::to_string(Limits::kMaxNames));
    EXPECT_EQ(events[Limits::kMaxNames].function, "");
    EXPECT_EQ(translator.namesNotKept(), 10u);
    // A key it knows may be named again.
    v1::TaskEventBatch again = test::namesAndCreations(5, 1, 0);
    again.mutable_functions(0)->set_name("renamed");
    ASSERT_EQ(translator.toGraphEvents(again, events), "");
    EXPECT_EQ(events[0].function, "renamed");
    EXPECT_EQ(translator.namesNotKept(), 10u);
  }
  {
    TaskEventTranslator translator;
    std::vector<GraphEvent> events;
    const size_t fit = Limits::kMaxStreamNameBytes / Limits::kMaxNameBytes;
    ASSERT_EQ(translator.toGraphEvents(test::namesAndCreations(1, fit + 5, 10 * Limits::kMaxNameBytes), events), "");
    EXPECT_EQ(events[fit - 1].function.size(), Limits::kMaxNameBytes);  // cut, and kept
    EXPECT_EQ(events[fit].function, "");
    EXPECT_EQ(translator.namesNotKept(), 5u);
  }
}

}  // namespace
}  // namespace nk
