#include "ayudame_translator.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace nk::client {
namespace {

std::vector<TaskEventRecord> drainAll(TaskCapture::ThreadEvents& t) {
  std::vector<TaskEventRecord> out(256);
  out.resize(t.ring.drain(out));
  return out;
}

// The sequence a Temanejo-instrumented runtime sends for two tasks, the
// second depending on the first.
TEST(AyudameTranslator, ATwoTaskRuntimeSessionBecomesTaskEvents) {
  TaskCapture capture(256, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  AyudameTranslator ayu(capture);
  int runtime = 3;  // an enum ayu_runtime_t, as StarPU passes it
  EXPECT_EQ(ayu.event(*t, 1, 0, &runtime, 1), 0);  // PREINIT
  EXPECT_EQ(ayu.event(*t, 2, 0, nullptr, 2), 0);   // INIT
  EXPECT_EQ(ayu.event(*t, 4, 7, "potrf", 3), 0);   // REGISTERFUNCTION 7
  int64_t task_a[] = {7, 0}, task_b[] = {7, 2};
  EXPECT_EQ(ayu.event(*t, 5, 100, task_a, 4), 0);  // ADDTASK 100
  EXPECT_EQ(ayu.event(*t, 5, 101, task_b, 5), 0);  // ADDTASK 101, priority 2
  int64_t dep[] = {100, 0x4000, 0x4000};
  EXPECT_EQ(ayu.event(*t, 7, 101, dep, 6), 0);     // ADDDEPENDENCY 100 -> 101
  int64_t worker[] = {2};
  EXPECT_EQ(ayu.event(*t, 8, 100, worker, 7), 0);  // ADDTASKTOQUEUE
  EXPECT_EQ(ayu.event(*t, 10, 100, worker, 8), 0); // PRERUNTASK on worker 2
  EXPECT_EQ(ayu.event(*t, 11, 100, worker, 9), 0); // RUNTASK
  EXPECT_EQ(ayu.event(*t, 12, 100, worker, 10), 0);  // POSTRUNTASK
  EXPECT_EQ(ayu.event(*t, 13, 101, worker, 11), 0);  // RUNTASKFAILED
  EXPECT_EQ(ayu.event(*t, 16, 0, nullptr, 12), 0);   // BARRIER
  EXPECT_EQ(ayu.runtimeId(), 3u);
  EXPECT_EQ(ayu.functionName(7), "potrf");
  EXPECT_EQ(ayu.functionName(8), "");

  auto r = drainAll(*t);
  std::vector<TaskEventType> types;
  for (const auto& e : r) types.push_back(e.type);
  EXPECT_EQ(types, (std::vector<TaskEventType>{TaskEventType::kCreated, TaskEventType::kCreated,
                                               TaskEventType::kDependence, TaskEventType::kQueued,
                                               TaskEventType::kStarted, TaskEventType::kFinished,
                                               TaskEventType::kFailed, TaskEventType::kSync}));
  EXPECT_EQ(r[0].task_id, 100u);
  EXPECT_EQ(r[0].b, TaskCapture::runtimeFunctionId(7));  // the runtime's function id, as a registry id
  std::string name;
  EXPECT_TRUE(capture.functionName(r[0].b, &name));
  EXPECT_EQ(name, "potrf");
  EXPECT_EQ(r[1].c, 2u);   // priority
  EXPECT_EQ(r[2].task_id, 101u);
  EXPECT_EQ(r[2].a, 100u);
  EXPECT_EQ(r[2].b, 0x4000u);
  EXPECT_EQ(r[4].a, 2u);   // worker
  EXPECT_EQ(r[7].a, 2u);   // barrier
}

// Ayudame's function ids are the runtime's own: they must not be taken for
// code addresses, nor collide with the C API's registered ids.
TEST(AyudameTranslator, FunctionIdsBecomeRegistryIds) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  AyudameTranslator ayu(capture);
  uint64_t capi = capture.registerFunction("gemm");
  EXPECT_EQ(ayu.event(*t, 4, 1, "potrf", 0), 0);
  EXPECT_EQ(ayu.event(*t, 4, 2, "trsm", 0), 0);
  EXPECT_EQ(ayu.event(*t, 4, 2, "trsm_renamed", 0), 0);  // a later registration renames
  int64_t task[] = {2, 0};
  EXPECT_EQ(ayu.event(*t, 5, 10, task, 1), 0);
  auto r = drainAll(*t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(TaskCapture::isFunctionId(r[0].b));
  EXPECT_NE(r[0].b, capi);
  EXPECT_NE(TaskCapture::runtimeFunctionId(1), capi);
  std::string name;
  ASSERT_TRUE(capture.functionName(r[0].b, &name));
  EXPECT_EQ(name, "trsm_renamed");
  EXPECT_EQ(ayu.functionName(1), "potrf");
  ASSERT_TRUE(capture.functionName(capi, &name));
  EXPECT_EQ(name, "gemm");
}

TEST(AyudameTranslator, BadCallsAreRefusedAndLeaveNoEvent) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  auto t = capture.attachThread();
  AyudameTranslator ayu(capture);
  EXPECT_EQ(ayu.event(*t, 18, 1, nullptr, 0), -EINVAL);  // no such event
  EXPECT_EQ(ayu.event(*t, -1, 1, nullptr, 0), -EINVAL);
  EXPECT_EQ(ayu.event(*t, 5, 1, nullptr, 0), -EINVAL);   // ADDTASK needs its data
  EXPECT_EQ(ayu.event(*t, 7, 1, nullptr, 0), -EINVAL);   // so does ADDDEPENDENCY
  EXPECT_EQ(ayu.event(*t, 4, 1, nullptr, 0), -EINVAL);   // and REGISTERFUNCTION
  EXPECT_TRUE(drainAll(*t).empty());
}

}  // namespace
}  // namespace nk::client
