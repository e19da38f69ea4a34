#pragma once

#include <signal.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace nk::pmpi {

// How a rank learns that it is being ended by a signal (Ctrl-C, mpirun
// aborting the job, scancel): a chained sigaction handler for SIGINT,
// SIGTERM and SIGHUP. The handler hands the signal to its own thread, which
// reports it (`report`, e.g. a progress report to the daemon), waits for
// that at most `deadline`, then runs what would have run without it: the
// program's own handler (with its siginfo), or the default action (the
// signal raised again, so the process ends by it as before). A signal the
// program ignores is left alone. A handler the program installs after this
// one replaces it, as it would replace the default.
//
// One at a time per process (signal dispositions are the process's).
class EndingSignals {
 public:
  using Report = std::function<void(int signal)>;
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};

  // Null when another is installed or its pipes cannot be made.
  static std::unique_ptr<EndingSignals> install(Report report, std::chrono::milliseconds deadline);
  // Puts back the actions it replaced, where its handler is still the one
  // installed, and ends its thread.
  ~EndingSignals();
  EndingSignals(const EndingSignals&) = delete;
  EndingSignals& operator=(const EndingSignals&) = delete;

  // The signal the process is ending by, 0 when none: set from the handler
  // before the report, back to 0 when the program's handler returns (it
  // did not end the process after all).
  static int ending();
  // Also marks the signal in `mark` from the handler (and clears it when the
  // program's handler returns): a word in memory the daemon can read after
  // the process is gone. Null: none.
  static void markInto(std::atomic<int32_t>* mark);

  struct Key {
    explicit Key() = default;
  };
  EndingSignals(Key, Report report);

 private:
  void run();

  Report report_;
  std::thread thread_;
};

}  // namespace nk::pmpi
