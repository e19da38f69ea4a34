#include "tasks/session_graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph_event_batch.h"

namespace nk {
namespace {

class SessionGraphTest : public ::testing::Test {
 protected:
  // A batch of `tasks` created tasks from `first` on, as the frame queued.
  std::vector<std::byte> frameOf(uint64_t first, uint64_t tasks) {
    std::vector<GraphEvent> events;
    for (uint64_t id = first; id < first + tasks; ++id) {
      GraphEvent created;
      created.task = id;
      created.function = "f";
      events.push_back(created);
    }
    const std::string wire = test::batchOf(events).SerializeAsString();
    std::vector<std::byte> frame;
    zstd_.compress(std::as_bytes(std::span(wire.data(), wire.size())), frame);
    return frame;
  }

  std::atomic<uint64_t> pending_total_{0};
  ZstdFrames zstd_;
};

// The builder takes a batch in slices, and a reader takes the rest of it
// and everything queued behind it.
TEST_F(SessionGraphTest, ABatchIsTakenInSlicesAndAReaderTakesTheRest) {
  SessionGraph graph(pending_total_);
  graph.queue(frameOf(1, 10));
  graph.queue(frameOf(11, 10));
  EXPECT_GT(pending_total_.load(), 0u);
  EXPECT_EQ(graph.build(3), 3u);
  EXPECT_EQ(graph.counts().tasks, 3u);
  EXPECT_TRUE(graph.pending());
  EXPECT_EQ(graph.build(9), 9u);  // the first batch's last 7 and 2 of the second
  EXPECT_EQ(graph.counts().events, 12u);
  size_t seen = 0;
  graph.look([&](const TaskGraph& g) { seen = g.tasks().size(); });
  EXPECT_EQ(seen, 20u);
  EXPECT_FALSE(graph.pending());
  EXPECT_EQ(pending_total_.load(), 0u);
  EXPECT_EQ(graph.build(100), 0u);
}

TEST_F(SessionGraphTest, ABatchThatCannotBeTakenIsCountedAndTheNextOnesAreTaken) {
  SessionGraph graph(pending_total_);
  std::vector<std::byte> garbage(40, std::byte{0x5a});
  graph.queue(garbage);
  graph.queue(frameOf(1, 4));
  size_t seen = 0;
  graph.look([&](const TaskGraph& g) { seen = g.tasks().size(); });
  EXPECT_EQ(seen, 4u);
  EXPECT_EQ(graph.counts().faults, 1u);
  EXPECT_NE(graph.lastFault(), "");
}

TEST_F(SessionGraphTest, ReleasedItKeepsItsCountsAndDropsWhatIsQueued) {
  SessionGraph graph(pending_total_);
  graph.queue(frameOf(1, 5));
  graph.look([](const TaskGraph&) {});
  graph.queue(frameOf(6, 5));
  SessionGraph::Counts counts = graph.release();
  EXPECT_EQ(counts.tasks, 5u);
  EXPECT_EQ(pending_total_.load(), 0u);
  EXPECT_FALSE(graph.pending());
  size_t seen = 1;
  graph.look([&](const TaskGraph& g) { seen = g.tasks().size(); });
  EXPECT_EQ(seen, 0u);
  EXPECT_EQ(graph.counts().tasks, 5u);
}

// A batch the builder has begun is finished by release(), whatever a caller
// saw of the queue before it: the counts never stop part way through one.
// What was never taken stays dropped.
TEST_F(SessionGraphTest, ReleaseFinishesTheBatchTheBuilderBegan) {
  SessionGraph graph(pending_total_);
  graph.queue(frameOf(1, 10));
  graph.queue(frameOf(11, 10));
  EXPECT_EQ(graph.build(3), 3u);
  SessionGraph::Counts counts = graph.release();
  EXPECT_EQ(counts.tasks, 10u);
  EXPECT_EQ(counts.events, 10u);
  EXPECT_EQ(graph.counts().tasks, 10u);
  EXPECT_EQ(pending_total_.load(), 0u);
}

}  // namespace
}  // namespace nk
