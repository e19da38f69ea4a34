#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "testlib/run_program.h"

namespace nk::bench {

// Bytes in the regular files at or under `path` (a file or a directory).
uintmax_t bytesUnder(const std::filesystem::path& path);

// A session daemon of the bench's own (lttng-sessiond --no-kernel with
// LTTNG_HOME in the bench's temporary directory, run as uid 65534 when the
// bench is root: a root session daemon always uses /var/run/lttng and would
// meet a system one; programs reach it through LTTNG_HOME), and the two
// sessions it runs for the bench ("discard" and "blocking", each one
// channel with LTTng's user-space defaults written out and the events
// 'nk_omp:*'), stopped at the end.
class PrivateLttng {
 public:
  PrivateLttng() = default;
  PrivateLttng(const PrivateLttng&) = delete;
  PrivateLttng& operator=(const PrivateLttng&) = delete;
  ~PrivateLttng() { stop(); }

  // false, with the reason in error(), when lttng-sessiond cannot run here.
  bool start(const std::filesystem::path& dir);
  // SIGTERM to the daemon it started (its consumer daemons go with it), then
  // the wait-shm names that were not there before (made by it and the traced
  // programs).
  void stop();

  const std::string& error() const { return error_; }
  const std::filesystem::path& home() const { return home_; }

  test::ProcessResult lttng(std::vector<std::string> args) const;

  // Both sessions, made once; started around each run, one at a time. false
  // (reason in error()) if LTTng refused.
  bool makeSessions();

  struct Recorded {
    uint64_t discarded = 0;
    uintmax_t trace_bytes = 0;
  };
  // `run` traced by one of the sessions: start, the run, stop (which waits
  // until the consumer daemon has written everything out), its statistics.
  // The trace is cleared once it passes 512 MB (clearing takes half a second).
  std::optional<Recorded> record(bool blocking, const std::function<bool()>& run);

 private:
  struct Totals {
    uint64_t discarded = 0;
    uintmax_t trace_bytes = 0;
  };
  static std::string sessionName(bool blocking) { return blocking ? "nk-blocking" : "nk-discard"; }

  std::filesystem::path home_;
  std::optional<uid_t> uid_;
  pid_t pid_ = -1;
  Totals totals_[2];
  std::string error_;
  std::set<std::string> shms_before_;
};

}  // namespace nk::bench
