#include "task_api_checks.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace nk::client {
namespace {

TEST(TaskApiChecks, RegisterNeedsANameAndSomewhereToPutTheId) {
  uint64_t id = 0;
  EXPECT_EQ(TaskApiChecks::registerFunction("potrf", &id), 0);
  EXPECT_EQ(TaskApiChecks::registerFunction(nullptr, &id), -EINVAL);
  EXPECT_EQ(TaskApiChecks::registerFunction("", &id), -EINVAL);
  EXPECT_EQ(TaskApiChecks::registerFunction("potrf", nullptr), -EINVAL);
}

TEST(TaskApiChecks, CreateTakesNonzeroIdsAndRegisteredFunctionsOnly) {
  TaskCapture capture(64, EventRing::Mode::kLossless);
  uint64_t f = capture.registerFunction("potrf");
  EXPECT_EQ(TaskApiChecks::create(7, 0, f), 0);
  EXPECT_EQ(TaskApiChecks::create(7, 3, 0), 0);  // unknown function, a parent
  EXPECT_EQ(TaskApiChecks::create(0, 0, f), -EINVAL);
  EXPECT_EQ(TaskApiChecks::create(7, 7, f), -EINVAL);  // its own parent
  EXPECT_EQ(TaskApiChecks::create(7, 0, 0x401000), -EINVAL);  // a code address is not an id of ours
  EXPECT_EQ(TaskApiChecks::create(7, 0, TaskCapture::runtimeFunctionId(1)), -EINVAL);  // Ayudame's
}

TEST(TaskApiChecks, DependKindsAreTheProtosAndEdgesJoinTwoTasks) {
  DependenceKind kind{};
  EXPECT_EQ(TaskApiChecks::depend(1, 2, 1, &kind), 0);
  EXPECT_EQ(kind, DependenceKind::kIn);
  EXPECT_EQ(TaskApiChecks::depend(1, 2, 2, &kind), 0);
  EXPECT_EQ(kind, DependenceKind::kOut);
  EXPECT_EQ(TaskApiChecks::depend(1, 2, 3, &kind), 0);
  EXPECT_EQ(kind, DependenceKind::kInout);
  EXPECT_EQ(TaskApiChecks::depend(1, 2, 4, &kind), 0);
  EXPECT_EQ(kind, DependenceKind::kMutexinoutset);
  EXPECT_EQ(TaskApiChecks::depend(1, 2, 5, &kind), 0);
  EXPECT_EQ(kind, DependenceKind::kInoutset);
  for (int bad : {0, 6, -1, 100}) EXPECT_EQ(TaskApiChecks::depend(1, 2, bad, &kind), -EINVAL) << bad;
  EXPECT_EQ(TaskApiChecks::depend(0, 2, 1, &kind), -EINVAL);
  EXPECT_EQ(TaskApiChecks::depend(1, 0, 1, &kind), -EINVAL);
  EXPECT_EQ(TaskApiChecks::depend(2, 2, 1, &kind), -EINVAL);
}

TEST(TaskApiChecks, TaskAndSelect) {
  EXPECT_EQ(TaskApiChecks::task(1), 0);
  EXPECT_EQ(TaskApiChecks::task(0), -EINVAL);
  uint64_t ready[] = {4, 5};
  size_t chosen = 9;
  EXPECT_EQ(TaskApiChecks::select(ready, 2, &chosen), 0);
  EXPECT_EQ(TaskApiChecks::select(nullptr, 2, &chosen), -EINVAL);
  EXPECT_EQ(TaskApiChecks::select(ready, 0, &chosen), -EINVAL);
  EXPECT_EQ(TaskApiChecks::select(ready, 2, nullptr), -EINVAL);
  EXPECT_EQ(chosen, 9u);  // the checks only check
}

}  // namespace
}  // namespace nk::client
