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

}  // namespace nk::test
