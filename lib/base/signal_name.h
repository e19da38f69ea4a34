#pragma once

#include <string>

namespace nk {

// A signal as people write it: "SIGINT", or "signal N" for a number the C
// library has no name for. The daemon's log and the CLI's job listing both
// name how a job ended, so they name signals the same way.
std::string signalName(int signal);

}  // namespace nk
