#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nk::client {

// The library's settings, from the environment.
struct ClientOptions {
  std::string socket_path = "/run/nodekeeper/nodekeeperd.sock";
  uint64_t power_budget_mw = 0;
  uint32_t max_threads = 0;  // from OMP_NUM_THREADS; 0: unknown
  bool debug = false;
  std::vector<uint32_t> forced_thread_counts;  // test hook NK_TEST_FORCE_THREADS
  std::vector<std::string> warnings;           // one stderr line each

  [[nodiscard]] static ClientOptions fromEnvironment(const char* (*getenv)(const char*));
};

}  // namespace nk::client
