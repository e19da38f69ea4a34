#pragma once

#include <map>
#include <mutex>
#include <set>

#include "apps/process_inspector.h"

namespace nk::test {

// Processes and threads the test declares; shared with the test through a
// pointer kept after the registry takes ownership.
class FakeProcessInspector final : public ProcessInspector {
 public:
  void addProcess(pid_t pid, uint64_t start_time = 100) {
    std::lock_guard lock(mutex_);
    processes_[pid] = start_time;
    threads_[pid].insert(pid);
  }
  void addThread(pid_t pid, pid_t tid) {
    std::lock_guard lock(mutex_);
    threads_[pid].insert(tid);
  }
  void removeProcess(pid_t pid) {
    std::lock_guard lock(mutex_);
    processes_.erase(pid);
    threads_.erase(pid);
  }

  std::optional<uint64_t> startTime(pid_t pid) const override {
    std::lock_guard lock(mutex_);
    auto it = processes_.find(pid);
    if (it == processes_.end()) return std::nullopt;
    return it->second;
  }
  bool hasThread(pid_t pid, pid_t tid) const override {
    std::lock_guard lock(mutex_);
    auto it = threads_.find(pid);
    return it != threads_.end() && it->second.count(tid) > 0;
  }

 private:
  mutable std::mutex mutex_;
  std::map<pid_t, uint64_t> processes_;
  std::map<pid_t, std::set<pid_t>> threads_;
};

}  // namespace nk::test
