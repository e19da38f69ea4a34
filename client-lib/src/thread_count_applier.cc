#include "thread_count_applier.h"

namespace nk::client {

// `setter` is omp_set_num_threads in the library, a recorder in tests.
ThreadCountApplier::ThreadCountApplier(Setter setter) : setter_(setter) {}

void ThreadCountApplier::setSetter(Setter setter) { setter_.store(setter, std::memory_order_release); }

// From any thread (the Control stream reader, the test hook). 0 means
// "unchanged" and is ignored. A newer decision replaces one not yet applied.
void ThreadCountApplier::setDecision(uint32_t d) {
  if (d == 0) return;
  decision_.store(d, std::memory_order_relaxed);
  pending_.store(d, std::memory_order_release);
}

// The one place where D reaches the OpenMP runtime. Called on the encountering
// thread after a region (OMPT parallel_end) or by nk_apply_thread_count().
// Returns true when a pending D was handed to the setter. With no setter (no
// OpenMP runtime in the process) the decision stays pending.
bool ThreadCountApplier::applyPending() {
  if (pending_.load(std::memory_order_relaxed) == 0) return false;  // hot path
  Setter setter = setter_.load(std::memory_order_acquire);
  if (!setter) return false;
  uint32_t d = pending_.exchange(0, std::memory_order_acq_rel);
  if (d == 0) return false;
  setter(static_cast<int>(d));
  applied_.store(d, std::memory_order_relaxed);
  apply_count_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace nk::client
