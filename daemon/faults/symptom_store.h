#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "faults/symptom_record.h"

namespace nk {

// The symptoms the daemon received, numbered 1, 2, 3... in arrival order.
// Bounded by count and by memory, dropping the oldest (and counting them),
// because a daemon outlives many jobs and a broken job may report without
// end. Watchers wait here for newer ones.
class SymptomStore {
 public:
  struct Options {
    size_t max_symptoms = 10000;
    size_t max_bytes = size_t{64} << 20;
  };
  struct Filter {
    std::optional<std::string> job_id;
    std::optional<uid_t> uid;  // only symptoms of jobs of this user
  };
  struct Batch {
    std::vector<SymptomRecord> symptoms;  // oldest first
    uint64_t last_id = 0;  // the newest id looked at: the next call's after_id
  };

  SymptomStore() : SymptomStore(Options{}) {}
  explicit SymptomStore(Options options);

  // Stores `symptom` with the next id, which it returns.
  uint64_t append(SymptomRecord symptom);
  // Symptoms with an id above `after_id` that pass `filter`, at most `limit`
  // of them. Those dropped for space are skipped.
  Batch since(uint64_t after_id, const Filter& filter, size_t limit = SIZE_MAX) const;
  // True as soon as a symptom with an id above `after_id` is stored, false
  // if none came by `deadline`.
  bool waitForNewer(uint64_t after_id, std::chrono::steady_clock::time_point deadline) const;

  uint64_t lastId() const;
  uint64_t dropped() const;
  // Symptoms ever appended, by SymptomKind value (unknown values count as
  // kUnspecified): counted as they arrive, so dropping the oldest for
  // space takes nothing off.
  static constexpr size_t kKinds = static_cast<size_t>(SymptomKind::kRankExited) + 1;
  std::array<uint64_t, kKinds> appendedByKind() const;
  size_t size() const;

 private:
  void dropOldest();

  Options options_;
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::deque<SymptomRecord> symptoms_;  // ids contiguous, ascending
  size_t bytes_ = 0;
  uint64_t last_id_ = 0;
  uint64_t dropped_ = 0;
  std::array<uint64_t, kKinds> appended_by_kind_{};
};

}  // namespace nk
