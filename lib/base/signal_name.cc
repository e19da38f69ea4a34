#include "base/signal_name.h"

#include <string.h>

namespace nk {

std::string signalName(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation ? "SIG" + std::string(abbreviation) : "signal " + std::to_string(signal);
}

}  // namespace nk
