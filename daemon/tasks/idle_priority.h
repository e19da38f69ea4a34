#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace nk {

// A thread that does its heavy work only in time nobody else wants
// (SCHED_IDLE) and its bookkeeping at normal priority, and that other
// threads lift to normal priority while they wait for a lock it holds. On a
// node whose cores all run threads that never yield, an idle thread can wait
// seconds for a slice: one preempted inside a lock held a ListSessions past
// its 5 s deadline, and the stream that records the app's events waits on
// the same locks. pthread's PTHREAD_PRIO_INHERIT does not help: the kernel
// passes on real-time priorities, not a policy. So the thread is idle only
// within an Idle scope, takes the locks others want outside one, or inside
// through Lock, whose waiters lift it (lift(): SCHED_OTHER) until it next
// settles (settle(): back to idle), where it holds nothing.
//
// Leaving SCHED_IDLE needs CAP_SYS_NICE (the daemon runs as root); without
// it the thread stays idle, and waiters wait, as before.
class IdlePriority {
 public:
  // On the thread that is to work idle: it is the one from now on.
  void adopt();
  // Whether the calling thread is the adopted one.
  bool onIdleThread() const;
  // Any thread: the adopted thread at normal priority until its next settle().
  void lift();
  // The adopted thread, within an Idle scope: back to idle if lifted since.
  void settle();
  // Lifts so far.
  uint64_t lifts() const { return lifts_.load(std::memory_order_relaxed); }
  // Whether this process may take a thread out of SCHED_IDLE (tried on a
  // thread of its own), so whether lift() can do anything.
  static bool liftable();

  // On the adopted thread: SCHED_IDLE (or nice 19 where that is refused)
  // for the scope, normal priority after.
  class Idle {
   public:
    explicit Idle(IdlePriority& priority);
    ~Idle();
    Idle(const Idle&) = delete;
    Idle& operator=(const Idle&) = delete;

   private:
    IdlePriority& priority_;
  };

  // A lock on `mutex` (null `idle`: a plain one). Taken by the idle thread,
  // it says so in `idle_holds`, which belongs with the mutex; a waiter that
  // finds it held by the idle thread lifts it, and looks again now and then
  // (the holder may be between taking the lock and saying so).
  class Lock {
   public:
    Lock(IdlePriority* idle, std::timed_mutex& mutex, std::atomic<bool>& idle_holds);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    std::unique_lock<std::timed_mutex> lock_;
    std::atomic<bool>& idle_holds_;
    bool mine_ = false;
  };

 private:
  std::atomic<pid_t> tid_{0};
  std::atomic<uint64_t> lifts_{0};
  std::atomic<uint64_t> settled_at_{0};  // lifts_ when the idle thread last settled
  std::atomic<bool> lifting_{false};     // one lifter at a time
};

}  // namespace nk
