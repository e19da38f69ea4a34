#include "client_options.h"

#include "power_budget_parser.h"

namespace nk::client {

// NODEKEEPER_SOCKET: the daemon's socket. NODEKEEPER_POWER_BUDGET_MW: the
// budget of an unmodified program (a bad value is reported and ignored).
// NK_DEBUG=1: debug lines on stderr. NK_TEST_FORCE_THREADS=3,2: TEST HOOK,
// acts as if the daemon had sent D=3 after the first parallel region, D=2
// after the second, and so on (without a daemon); for tests only.
ClientOptions ClientOptions::fromEnvironment(const char* (*getenv)(const char*)) {
  ClientOptions options;
  if (const char* socket = getenv("NODEKEEPER_SOCKET"); socket && *socket) options.socket_path = socket;
  if (const char* budget = getenv("NODEKEEPER_POWER_BUDGET_MW"); budget) {
    std::string error;
    uint64_t mw = 0;
    if (PowerBudgetParser::parse(budget, &mw, &error) == 0)
      options.power_budget_mw = mw;
    else
      options.warnings.push_back("nodekeeper: ignoring NODEKEEPER_POWER_BUDGET_MW=\"" + std::string(budget) + "\": " +
                                 error);
  }
  // OMP_NUM_THREADS=8 or 8,4 (nested levels): the outer level is the most
  // threads the program wants.
  if (const char* threads = getenv("OMP_NUM_THREADS"); threads && *threads) {
    uint32_t value = 0;
    const char* p = threads;
    while (*p >= '0' && *p <= '9' && value < 100000) value = value * 10 + static_cast<uint32_t>(*p++ - '0');
    if (p != threads && (*p == '\0' || *p == ',')) options.max_threads = value;
  }
  if (const char* debug = getenv("NK_DEBUG"); debug && *debug && std::string(debug) != "0") options.debug = true;
  if (const char* forced = getenv("NK_TEST_FORCE_THREADS"); forced && *forced) {
    uint32_t value = 0;
    bool digits = false;
    for (const char* p = forced;; ++p) {
      if (*p >= '0' && *p <= '9' && value < 100000) {
        value = value * 10 + static_cast<uint32_t>(*p - '0');
        digits = true;
      } else if (*p == ',' || *p == '\0') {
        if (digits && value > 0) options.forced_thread_counts.push_back(value);
        value = 0;
        digits = false;
        if (*p == '\0') break;
      } else {
        options.warnings.push_back("nodekeeper: ignoring NK_TEST_FORCE_THREADS=\"" + std::string(forced) +
                                   "\": expected counts like 3,2");
        options.forced_thread_counts.clear();
        break;
      }
    }
  }
  return options;
}

}  // namespace nk::client
