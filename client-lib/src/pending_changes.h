#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace nk::client {

// What the daemon has yet to hear from the app: threads that began or ended
// and a changed power budget. Not locked: DaemonConnection guards it with
// the mutex its background thread waits on.
class PendingChanges {
 public:
  struct ThreadChange {
    int tid = 0;
    bool ended = false;
    bool operator==(const ThreadChange&) const = default;
  };
  struct Batch {
    std::vector<ThreadChange> threads;
    std::optional<uint64_t> power_budget_mw;  // set when the budget changed since the last batch
  };

  explicit PendingChanges(uint64_t power_budget_mw) : budget_mw_(power_budget_mw) {}

  void threadBegan(int tid);
  void threadEnded(int tid);
  void setPowerBudget(uint64_t mw);

  // The budget for RegisterApp, which carries it: no separate change follows.
  uint64_t takeBudgetForRegistration();
  // After a (re)registration the daemon knows none of the threads: every
  // live one, as begun, replaces the changes queued for the old connection.
  Batch takeAll();
  // The changes since the last batch, in the order they happened.
  Batch takeNew();

  [[nodiscard]] bool budgetChanged() const { return budget_changed_; }

 private:
  std::optional<uint64_t> takeBudgetChange();

  std::set<int> live_tids_;
  std::vector<ThreadChange> thread_changes_;
  uint64_t budget_mw_;
  bool budget_changed_ = false;
};

}  // namespace nk::client
