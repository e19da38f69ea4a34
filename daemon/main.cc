#include <cstdio>
#include <span>

#include "daemon.h"
#include "daemon_options.h"
#include "grpc_log_bridge.h"
#include "logger.h"
#include "malloc_tuning.h"

int main(int argc, char** argv) {
  nk::MallocTuning::applyByReexec(argv);
  nk::Daemon::blockSignals();
  auto options = nk::DaemonOptions::fromCommandLine(std::span<const char* const>(argv, static_cast<size_t>(argc)));
  if (!options) {
    std::fprintf(stderr, "nodekeeperd: %s\n", options.error().message.c_str());
    return 1;
  }
  if (options->show_help) {
    std::fputs(nk::DaemonOptions::helpText().c_str(), stdout);
    return 0;
  }
  if (options->show_version) {
    std::printf("nodekeeperd %s\n", NK_VERSION);
    return 0;
  }
  nk::Logger::configure(options->log_level, nk::Logger::stderrIsJournal());
  nk::GrpcLogBridge::install();
  auto daemon = nk::Daemon::start(*options);
  if (!daemon) {
    nk::Logger::error(daemon.error().message);
    return 1;
  }
  return (*daemon)->run();
}
