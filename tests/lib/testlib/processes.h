#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace nk::test {

// A process's command line, its arguments joined by spaces; "" when it is gone.
std::string cmdlineOf(pid_t pid);
// Its parent's pid, from /proc; -1 when it is gone.
pid_t parentOf(pid_t pid);
// The processes below `root` (mpirun's ranks), found through /proc.
std::vector<pid_t> descendantsOf(pid_t root);
// A number from /proc/PID/status ("Threads:", "VmRSS:" in KiB); -1 when the
// process or the field is gone.
long statusNumber(pid_t pid, std::string_view field);
// Its user and system CPU time so far, in seconds; -1 when it is gone.
double cpuSecondsOf(pid_t pid);

}  // namespace nk::test
