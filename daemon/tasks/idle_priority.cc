#include "tasks/idle_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace nk {

namespace {

// The IdlePriority this thread entered, if any: asked on every lock, so
// without a system call.
thread_local const IdlePriority* t_entered = nullptr;

pid_t threadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

bool toIdle(pid_t tid) {
  sched_param none{};
  return ::sched_setscheduler(tid, SCHED_IDLE, &none) == 0;
}

bool toNormal(pid_t tid) {
  sched_param none{};
  return ::sched_setscheduler(tid, SCHED_OTHER, &none) == 0;
}

}  // namespace

void IdlePriority::adopt() {
  t_entered = this;
  tid_.store(threadId(), std::memory_order_release);
}

IdlePriority::Idle::Idle(IdlePriority& priority) : priority_(priority) {
  const pid_t self = threadId();
  if (!toIdle(self)) (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(self), 19);
  priority_.settled_at_.store(priority_.lifts_.load(std::memory_order_acquire), std::memory_order_release);
}

IdlePriority::Idle::~Idle() {
  // Without the privilege to leave it, the thread stays idle throughout.
  (void)toNormal(threadId());
}

bool IdlePriority::onIdleThread() const { return t_entered == this; }

bool IdlePriority::liftable() {
  bool left = false;
  std::thread probe([&left] {
    const pid_t self = threadId();
    left = toIdle(self) && toNormal(self);
  });
  probe.join();
  return left;
}

void IdlePriority::lift() {
  const pid_t tid = tid_.load(std::memory_order_acquire);
  if (tid == 0) return;
  // Lifted already and not settled since: a system call saved per waiter.
  if (lifts_.load(std::memory_order_acquire) != settled_at_.load(std::memory_order_acquire)) return;
  if (lifting_.exchange(true, std::memory_order_acq_rel)) return;
  // Counted after the change: a settle() that saw the old count leaves the
  // thread lifted, and its next one, which sees the new count, settles it.
  if (toNormal(tid)) lifts_.fetch_add(1, std::memory_order_release);
  lifting_.store(false, std::memory_order_release);
}

void IdlePriority::settle() {
  const uint64_t lifts = lifts_.load(std::memory_order_acquire);
  if (lifts == settled_at_.load(std::memory_order_relaxed)) return;
  (void)toIdle(threadId());
  settled_at_.store(lifts, std::memory_order_release);
}

IdlePriority::Lock::Lock(IdlePriority* idle, std::timed_mutex& mutex, std::atomic<bool>& idle_holds)
    : lock_(mutex, std::defer_lock), idle_holds_(idle_holds) {
  if (!idle) {
    lock_.lock();
    return;
  }
  while (!lock_.try_lock()) {
    if (idle_holds.load(std::memory_order_acquire)) idle->lift();
    if (lock_.try_lock_for(std::chrono::milliseconds(20))) break;
  }
  if (idle->onIdleThread()) {
    idle_holds.store(true, std::memory_order_release);
    mine_ = true;
  }
}

IdlePriority::Lock::~Lock() {
  // Before the unlock (members go after the body): a waiter never lifts a
  // thread that has let go.
  if (mine_) idle_holds_.store(false, std::memory_order_release);
}

}  // namespace nk
