#pragma once

#include "thread_affinity.h"

namespace nk {

// sched_getaffinity/sched_setaffinity on other processes' threads: needs
// CAP_SYS_NICE or the same uid, which the daemon (root) has.
class SchedThreadAffinity final : public ThreadAffinity {
 public:
  Result<std::vector<uint32_t>> get(pid_t tid) override;
  Status set(pid_t tid, const std::vector<uint32_t>& cpus) override;
};

}  // namespace nk
