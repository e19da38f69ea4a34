#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "faults/fault_record.h"

namespace nk {

// The faults this daemon published as a job's root (or acting root),
// numbered 1, 2, 3... Each fault once: a second report of the same kind
// about the same node of a job is dropped, and so is any report about a
// node already reported down. Bounded, the oldest dropped first; watchers
// wait here for newer ones.
class FaultReportLog {
 public:
  struct Filter {
    std::optional<std::string> job_id;
    std::optional<uid_t> uid;
  };
  struct Batch {
    std::vector<FaultRecord> faults;
    uint64_t last_id = 0;
  };

  explicit FaultReportLog(size_t max_faults = 10000) : max_faults_(max_faults) {}

  // The fault with its new id, or nullopt when it had been reported.
  std::optional<FaultRecord> publish(FaultRecord fault);
  Batch since(uint64_t after_id, const Filter& filter, size_t limit = SIZE_MAX) const;
  bool waitForNewer(uint64_t after_id, std::chrono::steady_clock::time_point deadline) const;
  // The newest report's id (0: none yet).
  uint64_t lastId() const;
  // True when `node` of `job_id` was reported (any kind).
  bool reported(const std::string& job_id, const std::string& node) const;
  size_t size() const;
  // Faults ever published, by FaultKind value, the ones since dropped
  // for space included.
  static constexpr size_t kKinds = static_cast<size_t>(FaultKind::kOverheating) + 1;
  std::array<uint64_t, kKinds> publishedByKind() const;

 private:
  size_t max_faults_;
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::deque<FaultRecord> faults_;
  std::set<std::tuple<std::string, std::string, FaultKind>> seen_;
  uint64_t last_id_ = 0;
  std::array<uint64_t, kKinds> published_by_kind_{};
};

}  // namespace nk
