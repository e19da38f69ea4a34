#include "thread_affinity_keeper.h"

#include <algorithm>
#include <utility>

namespace nk::client {

namespace {

ThreadAffinityKeeper::CpuList sorted(ThreadAffinityKeeper::CpuList cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

}  // namespace

void ThreadAffinityKeeper::setProcessMask(CpuList cpus) {
  std::lock_guard lock(mutex_);
  process_mask_ = sorted(std::move(cpus));
}

void ThreadAffinityKeeper::pinsPossibleFromNow() {
  std::lock_guard lock(mutex_);
  pins_possible_ = true;
}

// A thread made after the daemon could pin its maker may carry that pin: its
// own mask is then the process's. Before that, what it has is its own (the
// OpenMP runtime's binding, OMP_PROC_BIND, is in place by thread_begin).
void ThreadAffinityKeeper::threadBegan(int tid, CpuList current) {
  std::lock_guard lock(mutex_);
  CpuList own = pins_possible_ ? process_mask_ : sorted(std::move(current));
  threads_[tid] = Thread{std::move(own), {}};
}

void ThreadAffinityKeeper::threadEnded(int tid) {
  std::lock_guard lock(mutex_);
  threads_.erase(tid);
}

void ThreadAffinityKeeper::daemonPinned(int tid, CpuList cpus) {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(tid);
  if (it == threads_.end()) {
    // A thread whose begin the library did not see (the program's own
    // initial thread before the tool attached): the process's mask is its own.
    if (cpus.empty() || process_mask_.empty()) return;
    it = threads_.emplace(tid, Thread{process_mask_, {}}).first;
  }
  it->second.pinned = sorted(std::move(cpus));
}

size_t ThreadAffinityKeeper::giveBack(const ReadMask& read, const WriteMask& write) {
  std::vector<std::pair<int, Thread>> pinned;
  {
    std::lock_guard lock(mutex_);
    for (auto& [tid, thread] : threads_) {
      if (thread.pinned.empty()) continue;
      pinned.emplace_back(tid, thread);
      thread.pinned.clear();
    }
  }
  size_t given = 0;
  for (const auto& [tid, thread] : pinned) {
    if (thread.own.empty() || thread.own == thread.pinned) continue;
    std::optional<CpuList> current = read(tid);
    if (!current || sorted(std::move(*current)) != thread.pinned) continue;  // gone, or moved by the program
    if (write(tid, thread.own)) ++given;
  }
  return given;
}

std::optional<ThreadAffinityKeeper::CpuList> ThreadAffinityKeeper::ownMaskOf(int tid) const {
  std::lock_guard lock(mutex_);
  auto it = threads_.find(tid);
  if (it == threads_.end()) return std::nullopt;
  return it->second.own;
}

}  // namespace nk::client
