#include "tasks/session_graph.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
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

// An ended session's graph gives back what it held, its scratch for the
// last batch too: the daemon outlives many programs.
TEST_F(SessionGraphTest, ReleasedItHoldsNoMoreThanANewOne) {
  SessionGraph fresh(pending_total_);
  SessionGraph graph(pending_total_);
  for (uint64_t first = 1; first < 40000; first += 10000) graph.queue(frameOf(first, 10000));
  graph.look([](const TaskGraph&) {});
  const size_t built = graph.heldBytes();
  EXPECT_GT(built, fresh.heldBytes() + 10000 * sizeof(GraphEvent));
  graph.release();
  EXPECT_LE(graph.heldBytes(), fresh.heldBytes());
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

// The builder's thread, idle, holds the graph and cannot go on until it is
// lifted to normal priority: a reader's wait for the graph must lift it (on
// a busy node an idle thread holding the lock could wait seconds for a
// slice, and the reader with it). Neither moves otherwise, and the
// builder's bounded wait fails the test.
TEST_F(SessionGraphTest, AReaderLiftsTheIdleBuilderThatHoldsTheGraph) {
  if (!IdlePriority::liftable()) GTEST_SKIP() << "leaving SCHED_IDLE needs CAP_SYS_NICE";
  IdlePriority builder;
  SessionGraph graph(pending_total_, 0, &builder);
  graph.queue(frameOf(1, 10));
  std::atomic<bool> holding{false};
  bool lifted = false;
  std::thread builder_thread([&] {
    builder.adopt();
    IdlePriority::Idle idle(builder);
    graph.look([&](const TaskGraph&) {
      holding = true;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!lifted && std::chrono::steady_clock::now() < give_up) {
        lifted = ::sched_getscheduler(0) == SCHED_OTHER;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    builder.settle();
  });
  while (!holding) std::this_thread::yield();
  EXPECT_EQ(graph.counts().tasks, 10u);  // waits for the builder's look
  builder_thread.join();
  EXPECT_TRUE(lifted);
  EXPECT_EQ(builder.lifts(), 1u);
}

}  // namespace
}  // namespace nk
