#include "pending_changes.h"

#include <utility>

namespace nk::client {

void PendingChanges::threadBegan(int tid) {
  live_tids_.insert(tid);
  thread_changes_.push_back({tid, false});
}

void PendingChanges::threadEnded(int tid) {
  live_tids_.erase(tid);
  thread_changes_.push_back({tid, true});
}

void PendingChanges::setPowerBudget(uint64_t mw) {
  budget_mw_ = mw;
  budget_changed_ = true;
}

uint64_t PendingChanges::takeBudgetForRegistration() {
  budget_changed_ = false;
  return budget_mw_;
}

PendingChanges::Batch PendingChanges::takeAll() {
  Batch batch;
  thread_changes_.clear();
  for (int tid : live_tids_) batch.threads.push_back({tid, false});
  batch.power_budget_mw = takeBudgetChange();
  return batch;
}

PendingChanges::Batch PendingChanges::takeNew() {
  Batch batch;
  batch.threads.swap(thread_changes_);
  batch.power_budget_mw = takeBudgetChange();
  return batch;
}

std::optional<uint64_t> PendingChanges::takeBudgetChange() {
  if (!std::exchange(budget_changed_, false)) return std::nullopt;
  return budget_mw_;
}

}  // namespace nk::client
