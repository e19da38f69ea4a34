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
  own_[tid] = pins_possible_ ? process_mask_ : sorted(std::move(current));
}

void ThreadAffinityKeeper::threadEnded(int tid) {
  std::lock_guard lock(mutex_);
  own_.erase(tid);
}

void ThreadAffinityKeeper::daemonPinned(int tid, CpuList cpus) {
  if (cpus.empty()) return;
  std::lock_guard lock(mutex_);
  daemon_pins_.insert(sorted(std::move(cpus)));
  // A thread whose begin the library did not see (the program's own
  // initial thread before the tool attached): the process's mask is its own.
  if (!own_.contains(tid) && !process_mask_.empty()) own_.emplace(tid, process_mask_);
}

size_t ThreadAffinityKeeper::giveBack(const ReadMask& read, const WriteMask& write) {
  std::map<int, CpuList> own;
  std::set<CpuList> pins;
  {
    std::lock_guard lock(mutex_);
    own = own_;
    pins.swap(daemon_pins_);
  }
  size_t given = 0;
  for (const auto& [tid, mask] : own) {
    if (mask.empty()) continue;
    std::optional<CpuList> current = read(tid);
    if (!current) continue;  // gone
    CpuList now = sorted(std::move(*current));
    if (now == mask || !pins.contains(now)) continue;  // its own already, or moved by the program
    if (write(tid, mask)) ++given;
  }
  return given;
}

std::optional<ThreadAffinityKeeper::CpuList> ThreadAffinityKeeper::ownMaskOf(int tid) const {
  std::lock_guard lock(mutex_);
  auto it = own_.find(tid);
  if (it == own_.end()) return std::nullopt;
  return it->second;
}

}  // namespace nk::client
