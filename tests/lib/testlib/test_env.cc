#include "testlib/test_env.h"

#include <cstdlib>

namespace nk::test {

std::string envOr(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string daemonPath() {
  const char* p = std::getenv("NK_DAEMON");
  return p ? p : "nodekeeperd";
}

std::string cliPath() {
  const char* p = std::getenv("NK_CLI");
  return p ? p : "nodekeeper";
}

std::vector<std::string> pmpiAgentMpirunArgs() {
  const std::string runtime = envOr("NK_SANITIZER_RUNTIME");
  if (runtime.empty()) return {"-x", "LD_PRELOAD=" + envOr("NK_PMPI_LIB")};
  return {"-x", "LD_PRELOAD=" + runtime + ":" + envOr("NK_PMPI_LIB"), "-x",
          "ASAN_OPTIONS=" + envOr("ASAN_OPTIONS") + ":detect_leaks=0:handle_segv=0"};
}

}  // namespace nk::test
