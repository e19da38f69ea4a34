#include "tasks/worker_stall.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

WorkerStall::Input blockedFib(uint32_t parked, uint32_t workers) {
  WorkerStall::Input in;
  in.parked_workers = parked;
  in.workers = workers;
  in.blocked_functions = {{"fib", 3}};
  return in;
}

TEST(WorkerStall, EveryWorkerParkedOnABlockedFunctionSaysWhatFreesThem) {
  EXPECT_EQ(WorkerStall::explain(blockedFib(4, 4)),
            "all 4 workers are held by blocked tasks of fib (3 tasks); 'unblock function fib' frees them");
}

TEST(WorkerStall, AWorkerStillFreeIsNoStall) {
  EXPECT_EQ(WorkerStall::explain(blockedFib(3, 4)), "");
  EXPECT_EQ(WorkerStall::explain(blockedFib(0, 4)), "");
}

TEST(WorkerStall, ParkedWorkersThatNeverRanATaskCountAsTheTeam) {
  EXPECT_EQ(WorkerStall::explain(blockedFib(2, 1)),
            "all 2 workers are held by blocked tasks of fib (3 tasks); 'unblock function fib' frees them");
  EXPECT_EQ(WorkerStall::explain(blockedFib(1, 1)),
            "the one worker is held by blocked tasks of fib (3 tasks); 'unblock function fib' frees them");
  EXPECT_EQ(WorkerStall::explain(blockedFib(2, 0)),
            "2 workers are held by blocked tasks of fib (3 tasks); 'unblock function fib' frees them");
}

TEST(WorkerStall, TasksBlockedByIdAreNamedWithTheirUnblock) {
  WorkerStall::Input in;
  in.parked_workers = 2;
  in.workers = 2;
  in.blocked_tasks = {12, 13};
  EXPECT_EQ(WorkerStall::explain(in), "all 2 workers are held by blocked tasks 12 13; 'unblock 12 13' frees them");
  in.blocked_functions = {{"fib", 1}, {"g", 5}};
  EXPECT_EQ(WorkerStall::explain(in),
            "all 2 workers are held by blocked tasks of fib (1 task), g (5 tasks) and blocked tasks 12 13; "
            "'unblock function fib', 'unblock function g' and 'unblock 12 13' free them");
}

TEST(WorkerStall, LongListsAreCut) {
  WorkerStall::Input in;
  in.parked_workers = 2;
  in.workers = 2;
  for (uint64_t id = 1; id <= 10; ++id) in.blocked_tasks.push_back(id);
  EXPECT_EQ(WorkerStall::explain(in),
            "all 2 workers are held by blocked tasks 1 2 3 4 5 6 7 8 and 2 more; 'unblock 1 2 3 4 5 6 7 8 ...' frees "
            "them");
}

TEST(WorkerStall, ATaskStartedSinceTheGatesReportMeansAWorkerLeftIt) {
  WorkerStall::Input in = blockedFib(2, 2);
  in.started_since_report = true;
  EXPECT_EQ(WorkerStall::explain(in), "");
}

TEST(WorkerStall, AParkedCountWithNothingBlockedIsStaleAndExplainsNothing) {
  WorkerStall::Input in;
  in.parked_workers = 4;
  in.workers = 4;
  EXPECT_EQ(WorkerStall::explain(in), "");
}

TEST(WorkerStall, TheBreakHoldsThemAndBlockedTasksStayHeldAfterContinue) {
  WorkerStall::Input in = blockedFib(2, 2);
  in.held = true;
  EXPECT_EQ(WorkerStall::explain(in),
            "all 2 workers are held by the break; 'continue' or 'step' lets tasks start (blocked tasks of fib "
            "(3 tasks) stay held: 'unblock function fib' frees them)");
  in.blocked_functions.clear();
  EXPECT_EQ(WorkerStall::explain(in), "all 2 workers are held by the break; 'continue' or 'step' lets tasks start");
}

TEST(WorkerStall, WhileSteppingParkedWorkersWaitForBlockedTasks) {
  WorkerStall::Input in = blockedFib(2, 2);
  in.held = true;
  in.steps_left = 3;
  EXPECT_EQ(WorkerStall::explain(in),
            "all 2 workers are held by blocked tasks of fib (3 tasks); 'unblock function fib' frees them");
}

}  // namespace
}  // namespace nk
