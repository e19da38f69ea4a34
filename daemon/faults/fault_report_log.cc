#include "faults/fault_report_log.h"

namespace nk {

std::optional<FaultRecord> FaultReportLog::publish(FaultRecord fault) {
  std::lock_guard lock(mutex_);
  // A node found down explains whatever else is said about it afterwards.
  if (seen_.count({fault.job_id, fault.node, fault.kind}) || seen_.count({fault.job_id, fault.node, FaultKind::kNodeDown}))
    return std::nullopt;
  seen_.emplace(fault.job_id, fault.node, fault.kind);
  fault.fault_id = ++last_id_;
  const auto kind = static_cast<size_t>(fault.kind);
  ++published_by_kind_[kind < kKinds ? kind : 0];
  faults_.push_back(fault);
  while (faults_.size() > max_faults_) faults_.pop_front();
  arrived_.notify_all();
  return fault;
}

std::array<uint64_t, FaultReportLog::kKinds> FaultReportLog::publishedByKind() const {
  std::lock_guard lock(mutex_);
  return published_by_kind_;
}

FaultReportLog::Batch FaultReportLog::since(uint64_t after_id, const Filter& filter, size_t limit) const {
  std::lock_guard lock(mutex_);
  Batch batch;
  batch.last_id = after_id;
  for (const FaultRecord& f : faults_) {
    if (f.fault_id <= after_id) continue;
    if (batch.faults.size() >= limit) break;
    batch.last_id = f.fault_id;
    if (filter.job_id && f.job_id != *filter.job_id) continue;
    if (filter.uid && f.uid != *filter.uid) continue;
    batch.faults.push_back(f);
  }
  return batch;
}

bool FaultReportLog::waitForNewer(uint64_t after_id, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return arrived_.wait_until(lock, deadline, [&] { return last_id_ > after_id; });
}

uint64_t FaultReportLog::lastId() const {
  std::lock_guard lock(mutex_);
  return last_id_;
}

bool FaultReportLog::reported(const std::string& job_id, const std::string& node) const {
  std::lock_guard lock(mutex_);
  auto it = seen_.lower_bound({job_id, node, FaultKind::kUnspecified});
  return it != seen_.end() && std::get<0>(*it) == job_id && std::get<1>(*it) == node;
}

size_t FaultReportLog::size() const {
  std::lock_guard lock(mutex_);
  return faults_.size();
}

}  // namespace nk
