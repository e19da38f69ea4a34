#pragma once

#include <string>
#include <vector>

namespace nk::test {

// The variable's value, or "" when it is not set.
std::string envOr(const char* name);

// Paths of the built programs, from the environment the meson test sets
// (NK_DAEMON, NK_CLI); the installed names otherwise.
std::string daemonPath();
std::string cliPath();

// The mpirun arguments that load the PMPI agent (NK_PMPI_LIB) into every
// rank: -x LD_PRELOAD=.... In a sanitizer build the rank programs are not
// sanitized (tests/integration/mpi/meson.build), so the ASan runtime
// (NK_SANITIZER_RUNTIME) is preloaded ahead of the sanitized agent, and
// LeakSanitizer is off in the ranks: Open MPI 4.1 leaves allocations made by
// MCA components it has already unloaded, which no suppression can name. So
// is ASan's SIGSEGV handler: tests crash ranks with kill(SIGSEGV), which must
// stay a crash, not become an ASan report and exit code 1.
std::vector<std::string> pmpiAgentMpirunArgs();

}  // namespace nk::test
