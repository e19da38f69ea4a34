#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace nk::test {

// A process's command line, its arguments joined by spaces; "" when it is gone.
std::string cmdlineOf(pid_t pid);
// Its parent's pid, from /proc; -1 when it is gone.
pid_t parentOf(pid_t pid);
// The processes below `root` (mpirun's ranks), found through /proc.
std::vector<pid_t> descendantsOf(pid_t root);

}  // namespace nk::test
