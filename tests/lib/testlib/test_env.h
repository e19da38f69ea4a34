#pragma once

#include <string>

namespace nk::test {

// The variable's value, or "" when it is not set.
std::string envOr(const char* name);

// Paths of the built programs, from the environment the meson test sets
// (NK_DAEMON, NK_CLI); the installed names otherwise.
std::string daemonPath();
std::string cliPath();

}  // namespace nk::test
