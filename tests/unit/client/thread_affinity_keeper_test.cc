#include "thread_affinity_keeper.h"

#include <gtest/gtest.h>

#include <map>

namespace nk::client {
namespace {

using CpuList = ThreadAffinityKeeper::CpuList;

// The threads' masks as the kernel would hold them.
struct FakeKernel {
  std::map<int, CpuList> masks;
  std::map<int, CpuList> written;
  ThreadAffinityKeeper::ReadMask reader() {
    return [this](int tid) -> std::optional<CpuList> {
      auto it = masks.find(tid);
      if (it == masks.end()) return std::nullopt;
      return it->second;
    };
  }
  ThreadAffinityKeeper::WriteMask writer() {
    return [this](int tid, const CpuList& cpus) {
      if (!masks.contains(tid)) return false;
      masks[tid] = cpus;
      written[tid] = cpus;
      return true;
    };
  }
};

const CpuList kAll = {0, 1, 2, 3};

TEST(ThreadAffinityKeeper, PinnedThreadsGetTheirOwnMaskBack) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask(kAll);
  kernel.masks = {{10, kAll}, {11, {2, 3}}};  // 11: bound by the runtime (OMP_PROC_BIND)
  keeper.threadBegan(10, kernel.masks[10]);
  keeper.threadBegan(11, kernel.masks[11]);
  keeper.pinsPossibleFromNow();
  kernel.masks[10] = {0};
  kernel.masks[11] = {1};
  keeper.daemonPinned(10, {0});
  keeper.daemonPinned(11, {1});
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 2u);
  EXPECT_EQ(kernel.masks[10], kAll);
  EXPECT_EQ(kernel.masks[11], (CpuList{2, 3}));
  // The pins are forgotten: a second loss gives nothing back.
  kernel.written.clear();
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 0u);
  EXPECT_TRUE(kernel.written.empty());
}

TEST(ThreadAffinityKeeper, ThreadMadeByAPinnedThreadGetsTheProcessMask) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask(kAll);
  keeper.pinsPossibleFromNow();
  kernel.masks[20] = {0};  // inherited from its pinned maker
  keeper.threadBegan(20, {0});
  EXPECT_EQ(keeper.ownMaskOf(20), kAll);
  keeper.daemonPinned(20, {3});
  kernel.masks[20] = {3};
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 1u);
  EXPECT_EQ(kernel.masks[20], kAll);
}

TEST(ThreadAffinityKeeper, ThreadTheProgramMovedSinceIsLeftAlone) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask(kAll);
  keeper.threadBegan(30, kAll);
  keeper.daemonPinned(30, {1});
  kernel.masks[30] = {2, 3};  // the program's own choice after the pin
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 0u);
  EXPECT_EQ(kernel.masks[30], (CpuList{2, 3}));
}

TEST(ThreadAffinityKeeper, UnpinnedEndedOrVanishedThreadsAreNotTouched) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask(kAll);
  keeper.threadBegan(40, kAll);  // never pinned
  keeper.threadBegan(41, kAll);
  keeper.daemonPinned(41, {1});
  keeper.threadEnded(41);
  keeper.threadBegan(42, kAll);
  keeper.daemonPinned(42, {2});  // gone from the kernel
  kernel.masks = {{40, kAll}, {41, {1}}};
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 0u);
  EXPECT_TRUE(kernel.written.empty());
}

TEST(ThreadAffinityKeeper, ThreadUnseenAtBeginFallsBackToTheProcessMask) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask({3, 1, 2, 0});  // any order
  keeper.daemonPinned(50, {2});
  kernel.masks[50] = {2};
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 1u);
  EXPECT_EQ(kernel.masks[50], kAll);
}

TEST(ThreadAffinityKeeper, UnpinnedByTheDaemonIsNotGivenBackAgain) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask(kAll);
  keeper.threadBegan(60, kAll);
  keeper.daemonPinned(60, {1});
  keeper.daemonPinned(60, {});  // the daemon gave it back itself
  kernel.masks[60] = kAll;
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 0u);
  EXPECT_TRUE(kernel.written.empty());
}

// Affinity swaps: the daemon moved a thread to another thread's core and
// died before its decision said so.
TEST(ThreadAffinityKeeper, ThreadMovedByTheDaemonWithoutSayingIsGivenBackToo) {
  FakeKernel kernel;
  ThreadAffinityKeeper keeper;
  keeper.setProcessMask(kAll);
  keeper.threadBegan(70, kAll);
  keeper.threadBegan(71, kAll);
  keeper.daemonPinned(70, {0});
  keeper.daemonPinned(71, {1});
  kernel.masks = {{70, {1}}, {71, {0}}};  // swapped, unheard of
  EXPECT_EQ(keeper.giveBack(kernel.reader(), kernel.writer()), 2u);
  EXPECT_EQ(kernel.masks[70], kAll);
  EXPECT_EQ(kernel.masks[71], kAll);
}

}  // namespace
}  // namespace nk::client
