#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace nk {

// Per-thread CPU priority. On Linux the nice value belongs to the thread
// (setpriority(PRIO_PROCESS, tid)), so the daemon can favour the few
// threads that keep its time without favouring the rest of it.
class ThreadPriority {
 public:
  // The nice value of the latency-bound threads: the sampler, the energy
  // loop and the fault tree's heartbeats. Below the unit's Nice= for the
  // rest of the daemon; these threads sleep nearly all the time, so on a
  // busy node they win the CPU when they wake without taking much of it.
  static constexpr int kLatencyBoundNice = -10;

  // Sets the calling thread's nice value; other threads keep theirs.
  // Lowering it needs CAP_SYS_NICE (or RLIMIT_NICE).
  static Status setCallingThreadNice(int nice);
  static int callingThreadNice();

  // For a latency-bound thread as it starts: kLatencyBoundNice unless it
  // already has a better one. Where that is not permitted (not root, no
  // CAP_SYS_NICE) the thread runs on as it is, and the first refusal goes
  // to the refusal log, once per process.
  static void raiseLatencyBound(std::string_view thread_name);
  static void setRefusalLog(std::function<void(const std::string&)> log);
};

}  // namespace nk
