#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "base/result.h"

namespace nk {

// Where a thread may run (host CPU numbers).
class ThreadAffinity {
 public:
  virtual ~ThreadAffinity() = default;
  virtual Result<std::vector<uint32_t>> get(pid_t tid) = 0;
  virtual Status set(pid_t tid, const std::vector<uint32_t>& cpus) = 0;
};

}  // namespace nk
