#include "sched_thread_affinity.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace nk {

namespace {

constexpr uint32_t kMaxCpus = 4096;

std::string describe(pid_t tid, int err) {
  return "thread " + std::to_string(tid) + ": " + std::strerror(err);
}

}  // namespace

Result<std::vector<uint32_t>> SchedThreadAffinity::get(pid_t tid) {
  cpu_set_t* set = CPU_ALLOC(kMaxCpus);
  size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set);
  if (sched_getaffinity(tid, size, set) != 0) {
    int err = errno;
    CPU_FREE(set);
    if (err == ESRCH) return notFound(describe(tid, err));
    return unavailable("sched_getaffinity " + describe(tid, err));
  }
  std::vector<uint32_t> cpus;
  for (uint32_t cpu = 0; cpu < kMaxCpus; ++cpu)
    if (CPU_ISSET_S(cpu, size, set)) cpus.push_back(cpu);
  CPU_FREE(set);
  return cpus;
}

Status SchedThreadAffinity::set(pid_t tid, const std::vector<uint32_t>& cpus) {
  if (cpus.empty()) return invalidArgument("an empty CPU set for thread " + std::to_string(tid));
  cpu_set_t* set = CPU_ALLOC(kMaxCpus);
  size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set);
  for (uint32_t cpu : cpus) {
    if (cpu >= kMaxCpus) {
      CPU_FREE(set);
      return invalidArgument("CPU " + std::to_string(cpu) + " is out of range");
    }
    CPU_SET_S(cpu, size, set);
  }
  int rc = sched_setaffinity(tid, size, set);
  int err = errno;
  CPU_FREE(set);
  if (rc == 0) return {};
  if (err == ESRCH) return notFound(describe(tid, err));
  if (err == EPERM) return permissionDenied("sched_setaffinity " + describe(tid, err));
  return unavailable("sched_setaffinity " + describe(tid, err));
}

}  // namespace nk
