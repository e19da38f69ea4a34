#include "thread_count_applier.h"

namespace nk::client {

// `setter` is omp_set_num_threads in the library, a recorder in tests.
ThreadCountApplier::ThreadCountApplier(Setter setter, Getter getter) : setter_(setter), getter_(getter) {}

void ThreadCountApplier::setSetter(Setter setter) { setter_.store(setter, std::memory_order_release); }

void ThreadCountApplier::setGetter(Getter getter) { getter_.store(getter, std::memory_order_release); }

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
  // Only the encountering thread applies, so this runs before the first D
  // reaches the runtime: what it reads is the program's own setting.
  if (own_.load(std::memory_order_relaxed) == 0) {
    if (Getter getter = getter_.load(std::memory_order_acquire)) {
      int own = getter();
      if (own > 0) own_.store(static_cast<uint32_t>(own), std::memory_order_relaxed);
    }
  }
  setter(static_cast<int>(d));
  applied_.store(d, std::memory_order_relaxed);
  apply_count_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// From the connection's thread when the daemon is lost; applied, like D, at
// the end of the program's next region. nk_thread_count says -EAGAIN again.
uint32_t ThreadCountApplier::giveBackOwnTeamSize() {
  uint32_t own = own_.load(std::memory_order_relaxed);
  if (own == 0) return 0;
  decision_.store(0, std::memory_order_relaxed);
  pending_.store(own, std::memory_order_release);
  return own;
}

}  // namespace nk::client
