#include "grpc_log_bridge.h"

#include <grpc/support/log.h>

#include <chrono>
#include <mutex>
#include <string>

#include "common/log_rate_limit.h"
#include "logger.h"

namespace nk {

namespace {

constexpr uint32_t kLinesPerWindow = 10;
constexpr std::chrono::seconds kWindow{60};

void logFromGrpc(gpr_log_func_args* args) {
  static std::mutex mutex;
  static LogRateLimit limit(kLinesPerWindow, kWindow);
  LogRateLimit::Decision decision;
  {
    std::lock_guard lock(mutex);
    decision = limit.admit(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
  }
  if (decision.held_back > 0)
    Logger::warning("gRPC: " + std::to_string(decision.held_back) + " more of its messages not logged (at most " +
                    std::to_string(kLinesPerWindow) + " a minute)");
  if (!decision.log) return;
  std::string message = std::string("gRPC: ") + (args->message ? args->message : "");
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      Logger::warning(message);
      break;
    case GPR_LOG_SEVERITY_INFO:
      Logger::info(message);
      break;
    default:
      Logger::debug(message);
  }
}

}  // namespace

void GrpcLogBridge::install() { gpr_set_log_function(logFromGrpc); }

}  // namespace nk
