#include "task_capture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace nk::client {
namespace {

std::vector<TaskEventRecord> drainAll(TaskCapture::ThreadEvents& t) {
  std::vector<TaskEventRecord> out(4096);
  out.resize(t.ring.drain(out));
  return out;
}

TEST(TaskCapture, CreationDependencesAndRunsBecomeRecords) {
  TaskCapture capture(1024, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  constexpr uint64_t parent = 99, x = 0x1000;
  uint64_t a = capture.created(*t, parent, 0xf00, 0, 10);
  Dependence out_x{x, DependenceKind::kOut};
  capture.dependences(*t, parent, a, std::span(&out_x, 1), 11);
  uint64_t b = capture.created(*t, parent, 0xf00, 5, 12);
  Dependence in_x{x, DependenceKind::kIn};
  capture.dependences(*t, parent, b, std::span(&in_x, 1), 13);
  capture.started(*t, a, 3, 20);
  capture.finished(*t, a, false, 30);
  auto records = drainAll(*t);
  ASSERT_EQ(records.size(), 5u);  // a's dependence has no predecessor: no record
  EXPECT_EQ(records[0].type, TaskEventType::kCreated);
  EXPECT_EQ(records[0].task_id, a);
  EXPECT_EQ(records[0].a, parent);
  EXPECT_EQ(records[0].b, 0xf00u);
  EXPECT_EQ(records[1].type, TaskEventType::kCreated);
  EXPECT_EQ(records[1].c, 5u);
  EXPECT_EQ(records[2].type, TaskEventType::kDependence);
  EXPECT_EQ(records[2].task_id, b);
  EXPECT_EQ(records[2].a, a);
  EXPECT_EQ(records[2].b, x);
  EXPECT_EQ(records[2].c, static_cast<uint64_t>(DependenceKind::kIn));
  EXPECT_EQ(records[3].type, TaskEventType::kStarted);
  EXPECT_EQ(records[3].a, 3u);
  EXPECT_EQ(records[4].type, TaskEventType::kFinished);
  EXPECT_EQ(records[4].timestamp_ns, 30u);
}

TEST(TaskCapture, SiblingsOfDifferentParentsAreNotOrdered) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  Dependence inout{0x10, DependenceKind::kInout};
  uint64_t a = capture.created(*t, 1, 0, 0, 0);
  capture.dependences(*t, 1, a, std::span(&inout, 1), 0);
  uint64_t b = capture.created(*t, 2, 0, 0, 0);  // another parent, same address
  capture.dependences(*t, 2, b, std::span(&inout, 1), 0);
  for (const auto& r : drainAll(*t)) EXPECT_NE(r.type, TaskEventType::kDependence);
  // A finished parent's tracker is dropped; its id is not reused anyway.
  EXPECT_EQ(t->trackers.size(), 2u);
  capture.finished(*t, 1, false, 1);
  EXPECT_EQ(t->trackers.size(), 1u);
}

TEST(TaskCapture, IdsAreUniqueAcrossThreadsWithoutSharing) {
  TaskCapture capture(1 << 16, EventRing::Mode::kLossless);
  constexpr int kThreads = 4, kTasks = 20000;
  std::vector<std::shared_ptr<TaskCapture::ThreadEvents>> events;
  for (int i = 0; i < kThreads; ++i) events.push_back(capture.attachThread());
  std::vector<std::vector<uint64_t>> ids(kThreads);
  std::vector<std::thread> workers;
  for (int i = 0; i < kThreads; ++i)
    workers.emplace_back([&, i] {
      for (int k = 0; k < kTasks; ++k) ids[i].push_back(capture.created(*events[i], 0, 0, 0, 0));
    });
  for (auto& w : workers) w.join();
  std::vector<uint64_t> all;
  for (const auto& v : ids) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kTasks));
  EXPECT_EQ(capture.threads().size(), static_cast<size_t>(kThreads));
}

TEST(TaskCapture, LossyRingsCountWhatDidNotFit) {
  TaskCapture capture(8, EventRing::Mode::kLossy);
  auto t = capture.attachThread();
  for (int i = 0; i < 20; ++i) capture.created(*t, 0, 0, 0, i);
  EXPECT_EQ(t->ring.dropped(), 12u);
  EXPECT_EQ(drainAll(*t).size(), 8u);
}

// No daemon: capture is off, the full lossless ring of a thread is never
// waited on (nothing is pushed), the events are counted per thread, and
// capture resumes as it was when turned on again.
TEST(TaskCapture, WithCaptureOffNothingIsPushedAndAllIsCounted) {
  TaskCapture capture(4, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  auto other = capture.attachThread();
  for (int i = 0; i < 4; ++i) capture.queued(*t, 1, i);  // full
  capture.setCapturing(false);
  EXPECT_FALSE(capture.capturing());
  uint64_t a = capture.created(*t, 7, 0xf00, 0, 10);
  capture.started(*t, a, 0, 11);
  capture.finished(*t, a, false, 12);
  capture.sync(*other, 0, 1, false, 13);
  TaskCapture::uncaptured(*other, 2);
  EXPECT_EQ(t->uncaptured.load(), 3u);
  EXPECT_EQ(capture.uncaptured(), 6u);
  EXPECT_EQ(capture.dropped(), 0u);
  EXPECT_EQ(drainAll(*t).size(), 4u);
  EXPECT_TRUE(drainAll(*other).empty());
  capture.setCapturing(true);
  capture.queued(*t, 1, 20);
  auto records = drainAll(*t);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].timestamp_ns, 20u);
  EXPECT_EQ(capture.uncaptured(), 6u);
}

// The shipper's deliveries are every ring's progress: while the daemon
// takes writes (here one per read of a fake clock, 10 s of it against a
// 1 s limit) a full lossless ring waits instead of dropping; once it takes
// none for the limit, the ring drops, and the totals say so. The clock
// stands still from read 40 until the test's shipper has drained the ring:
// a shipper thread the host ran late must not look like a stalled daemon.
TaskCapture* g_delivering = nullptr;
std::atomic<int> g_reads{0};
std::atomic<bool> g_drained{false};
std::chrono::steady_clock::time_point deliveringClock() {
  int read = ++g_reads;
  if (read < 40 && g_delivering) g_delivering->delivered(1);
  while (read >= 40 && !g_drained.load()) std::this_thread::yield();
  return std::chrono::steady_clock::time_point(std::chrono::milliseconds(250) * read);
}

TEST(TaskCapture, DeliveriesKeepLosslessRingsWaiting) {
  EventRing::StallPolicy policy;
  policy.limit = std::chrono::seconds(1);
  policy.now = &deliveringClock;
  TaskCapture capture(4, EventRing::Mode::kLossless, policy);
  g_delivering = &capture;
  auto t = capture.attachThread();
  for (int i = 0; i < 4; ++i) capture.queued(*t, 1, i);
  std::atomic<bool> pushed{false};  // also ends the shipper when the push did not wait
  std::thread shipper([&] {
    while (g_reads.load() < 40 && !pushed.load()) std::this_thread::yield();
    drainAll(*t);
    g_drained = true;  // also when the push did not wait, so nothing waits for it
  });
  capture.queued(*t, 1, 4);  // waits through 39 deliveries, then the drain
  pushed = true;
  shipper.join();
  EXPECT_EQ(capture.dropped(), 0u);
  EXPECT_EQ(capture.deliveries(), 39u);
  EXPECT_EQ(capture.deliveredEvents(), 39u);
  for (int i = 0; i < 3; ++i) capture.queued(*t, 1, i);
  capture.queued(*t, 1, 9);  // no delivery after read 40: dropped after the limit
  EXPECT_EQ(capture.dropped(), 1u);
  EXPECT_EQ(capture.stalls(), 1u);
  g_delivering = nullptr;
}

// The shipper names a creation's function before the daemon takes the
// creation: each thread tells it of a function before the creation's event,
// once while the function stays in its small table of recent ones; every
// thread for itself.
TEST(TaskCapture, AThreadTellsTheFunctionsOfItsCreationsOnce) {
  TaskCapture capture(1024, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  auto other = capture.attachThread();
  EXPECT_TRUE(capture.takeToldFunctions().empty());
  for (uint64_t function : {0x1000, 0x2000, 0x1000, 0x2000, 0x1000}) capture.created(*t, 0, function, 0, 1);
  EXPECT_EQ(capture.takeToldFunctions(), (std::vector<uint64_t>{0x1000, 0x2000}));
  capture.created(*t, 0, 0x1000, 0, 2);
  capture.createdWithId(*t, 77, 0, 0x2000, 0, 3);
  EXPECT_TRUE(capture.takeToldFunctions().empty());
  capture.created(*other, 0, 0x1000, 0, 4);
  capture.createdWithId(*t, 78, 0, 0x3000, 0, 5);
  EXPECT_EQ(capture.takeToldFunctions(), (std::vector<uint64_t>{0x1000, 0x3000}));
  EXPECT_EQ(drainAll(*t).size(), 8u);
}

// Each thread's events keep their order in time: a refit of the clock (or
// here, a caller's earlier reading) never sends one before the last.
TEST(TaskCapture, AThreadsEventsNeverGoBackInTime) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  capture.queued(*t, 1, 500);
  capture.queued(*t, 2, 400);
  capture.queued(*t, 3, 600);
  const auto records = drainAll(*t);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].timestamp_ns, 500u);
  EXPECT_EQ(records[1].timestamp_ns, 500u);
  EXPECT_EQ(records[2].timestamp_ns, 600u);
}

// Names registered by the C API: one id per name, never one a code
// address could be, found again by the shipper.
TEST(TaskCapture, RegisteredFunctionsHaveMarkedIdsAndNames) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  uint64_t potrf = capture.registerFunction("potrf");
  uint64_t gemm = capture.registerFunction("gemm");
  EXPECT_NE(potrf, gemm);
  EXPECT_EQ(capture.registerFunction("potrf"), potrf);  // again: the same id
  for (uint64_t id : {potrf, gemm}) {
    EXPECT_TRUE(TaskCapture::isFunctionId(id));
    EXPECT_EQ(id & TaskCapture::kRuntimeFunctionBit, 0u);
    EXPECT_EQ(id & TaskCapture::kImplicitBit, 0u);
  }
  EXPECT_FALSE(TaskCapture::isFunctionId(reinterpret_cast<uint64_t>(&capture)));
  EXPECT_FALSE(TaskCapture::isFunctionId(0x7fffffffffffull));  // the top of user space
  std::string name;
  ASSERT_TRUE(capture.functionName(potrf, &name));
  EXPECT_EQ(name, "potrf");
  ASSERT_TRUE(capture.functionName(gemm, &name));
  EXPECT_EQ(name, "gemm");
  EXPECT_FALSE(capture.functionName(gemm + 1, &name));
  EXPECT_FALSE(capture.functionName(TaskCapture::runtimeFunctionId(1), &name));
  // A runtime's own numbering lands apart from the C API's.
  uint64_t own = capture.registerRuntimeFunction(1, "trsm");
  EXPECT_EQ(own, TaskCapture::runtimeFunctionId(1));
  EXPECT_NE(own, potrf);
  ASSERT_TRUE(capture.functionName(own, &name));
  EXPECT_EQ(name, "trsm");
  ASSERT_TRUE(capture.functionName(potrf, &name));
  EXPECT_EQ(name, "potrf");
}

TEST(TaskCapture, RegistrationFromManyThreadsGivesOneIdPerName) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  constexpr int kThreads = 4, kNames = 200;
  std::vector<std::vector<uint64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < kNames; ++k) ids[i].push_back(capture.registerFunction("f" + std::to_string(k)));
    });
  for (auto& th : threads) th.join();
  for (int i = 1; i < kThreads; ++i) EXPECT_EQ(ids[i], ids[0]);
  EXPECT_EQ(std::set<uint64_t>(ids[0].begin(), ids[0].end()).size(), static_cast<size_t>(kNames));
  std::string name;
  ASSERT_TRUE(capture.functionName(ids[0][17], &name));
  EXPECT_EQ(name, "f17");
}

}  // namespace
}  // namespace nk::client
