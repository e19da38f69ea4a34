#include "pending_changes.h"

#include <gtest/gtest.h>

#include <vector>

namespace nk::client {
namespace {

using Change = PendingChanges::ThreadChange;

TEST(PendingChanges, NewChangesComeInOrderOnce) {
  PendingChanges pending(0);
  pending.threadBegan(11);
  pending.threadBegan(12);
  pending.threadEnded(11);
  PendingChanges::Batch batch = pending.takeNew();
  EXPECT_EQ(batch.threads, (std::vector<Change>{{11, false}, {12, false}, {11, true}}));
  EXPECT_FALSE(batch.power_budget_mw.has_value());
  EXPECT_TRUE(pending.takeNew().threads.empty());
}

TEST(PendingChanges, AllIsTheLiveThreadsAsBegunInsteadOfTheQueue) {
  PendingChanges pending(0);
  pending.threadBegan(30);
  pending.threadBegan(10);
  pending.threadBegan(20);
  pending.threadEnded(20);
  PendingChanges::Batch batch = pending.takeAll();
  EXPECT_EQ(batch.threads, (std::vector<Change>{{10, false}, {30, false}}));
  // The old connection's queue went with it.
  EXPECT_TRUE(pending.takeNew().threads.empty());
  // A later re-registration names the same threads again.
  EXPECT_EQ(pending.takeAll().threads, (std::vector<Change>{{10, false}, {30, false}}));
}

TEST(PendingChanges, ABudgetChangeIsSentOnceWithItsLatestValue) {
  PendingChanges pending(5000);
  EXPECT_FALSE(pending.budgetChanged());
  pending.setPowerBudget(7000);
  pending.setPowerBudget(8000);
  EXPECT_TRUE(pending.budgetChanged());
  PendingChanges::Batch batch = pending.takeNew();
  ASSERT_TRUE(batch.power_budget_mw.has_value());
  EXPECT_EQ(*batch.power_budget_mw, 8000u);
  EXPECT_FALSE(pending.budgetChanged());
  EXPECT_FALSE(pending.takeNew().power_budget_mw.has_value());
  EXPECT_FALSE(pending.takeAll().power_budget_mw.has_value());
}

TEST(PendingChanges, TakeAllCarriesAChangedBudget) {
  PendingChanges pending(0);
  pending.setPowerBudget(9000);
  PendingChanges::Batch batch = pending.takeAll();
  ASSERT_TRUE(batch.power_budget_mw.has_value());
  EXPECT_EQ(*batch.power_budget_mw, 9000u);
}

TEST(PendingChanges, RegistrationCarriesTheBudgetSoNoChangeFollows) {
  PendingChanges pending(5000);
  EXPECT_EQ(pending.takeBudgetForRegistration(), 5000u);
  pending.setPowerBudget(6000);
  EXPECT_EQ(pending.takeBudgetForRegistration(), 6000u);
  EXPECT_FALSE(pending.budgetChanged());
  EXPECT_FALSE(pending.takeAll().power_budget_mw.has_value());
}

}  // namespace
}  // namespace nk::client
