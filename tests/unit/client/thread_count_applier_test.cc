#include "thread_count_applier.h"

#include <gtest/gtest.h>

#include <vector>

namespace nk::client {
namespace {

std::vector<int> g_set;
void record(int n) { g_set.push_back(n); }

TEST(ThreadCountApplier, NothingPendingDoesNothing) {
  g_set.clear();
  ThreadCountApplier applier(&record);
  EXPECT_FALSE(applier.applyPending());
  EXPECT_EQ(applier.decision(), 0u);
  EXPECT_TRUE(g_set.empty());
}

TEST(ThreadCountApplier, AppliesEachDecisionOnce) {
  g_set.clear();
  ThreadCountApplier applier(&record);
  applier.setDecision(3);
  EXPECT_TRUE(applier.hasPending());
  EXPECT_TRUE(applier.applyPending());
  EXPECT_FALSE(applier.applyPending());
  applier.setDecision(2);
  EXPECT_TRUE(applier.applyPending());
  EXPECT_EQ(g_set, (std::vector<int>{3, 2}));
  EXPECT_EQ(applier.applied(), 2u);
  EXPECT_EQ(applier.applyCount(), 2u);
}

TEST(ThreadCountApplier, NewerDecisionReplacesUnapplied) {
  g_set.clear();
  ThreadCountApplier applier(&record);
  applier.setDecision(5);
  applier.setDecision(4);
  EXPECT_TRUE(applier.applyPending());
  EXPECT_EQ(g_set, (std::vector<int>{4}));
}

TEST(ThreadCountApplier, ZeroMeansUnchanged) {
  g_set.clear();
  ThreadCountApplier applier(&record);
  applier.setDecision(3);
  applier.applyPending();
  applier.setDecision(0);
  EXPECT_FALSE(applier.applyPending());
  EXPECT_EQ(applier.decision(), 3u);
}

TEST(ThreadCountApplier, WithoutRuntimeTheDecisionWaits) {
  g_set.clear();
  ThreadCountApplier applier;
  applier.setDecision(3);
  EXPECT_FALSE(applier.applyPending());
  EXPECT_TRUE(applier.hasPending());
  applier.setSetter(&record);
  EXPECT_TRUE(applier.applyPending());
  EXPECT_EQ(g_set, (std::vector<int>{3}));
}

int g_own = 12;
int ownTeamSize() { return g_own; }

TEST(ThreadCountApplier, OwnTeamSizeIsReadBeforeTheFirstDecision) {
  g_set.clear();
  g_own = 12;
  ThreadCountApplier applier(&record, &ownTeamSize);
  EXPECT_EQ(applier.giveBackOwnTeamSize(), 0u) << "nothing applied yet: nothing to give back";
  applier.setDecision(2);
  EXPECT_TRUE(applier.applyPending());
  g_own = 2;  // what the runtime says once D is in place
  applier.setDecision(3);
  EXPECT_TRUE(applier.applyPending());
  EXPECT_EQ(applier.ownTeamSize(), 12u);
}

TEST(ThreadCountApplier, GiveBackAppliesTheOwnTeamSizeAtTheNextRegion) {
  g_set.clear();
  g_own = 12;
  ThreadCountApplier applier(&record, &ownTeamSize);
  applier.setDecision(2);
  applier.applyPending();
  EXPECT_EQ(applier.giveBackOwnTeamSize(), 12u);
  EXPECT_EQ(applier.decision(), 0u) << "no daemon decision stands after a loss";
  EXPECT_TRUE(applier.hasPending());
  EXPECT_TRUE(applier.applyPending());
  EXPECT_EQ(g_set, (std::vector<int>{2, 12}));
  EXPECT_EQ(applier.applied(), 12u);
  // A daemon that comes back decides again.
  applier.setDecision(4);
  EXPECT_TRUE(applier.applyPending());
  EXPECT_EQ(g_set.back(), 4);
}

TEST(ThreadCountApplier, WithoutGetterThereIsNothingToGiveBack) {
  g_set.clear();
  ThreadCountApplier applier(&record);
  applier.setDecision(2);
  applier.applyPending();
  EXPECT_EQ(applier.giveBackOwnTeamSize(), 0u);
  EXPECT_FALSE(applier.hasPending());
}

}  // namespace
}  // namespace nk::client
