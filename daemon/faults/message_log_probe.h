#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "base/result.h"
#include "faults/prober.h"

namespace nk {

class JobRegistry;

// The node's side of the log probe over the message log of the paper
// (Shafik et al.): reads the PMPI message logs that the agents of a job's ranks here
// map (nodekeeper-pmpi-<pid>.log in `log_dir`) and tells which messages
// count as pending: those that failed, and those that took longer than
// kSlowMessage, which a rank that hangs in a send or receive leaves behind.
class MessageLogProbe {
 public:
  // At most this many messages are described; all of them are counted.
  static constexpr size_t kMaxEntries = 1000;
  static constexpr std::chrono::nanoseconds kSlowMessage = std::chrono::seconds(1);

  MessageLogProbe(const JobRegistry& jobs, std::filesystem::path log_dir);

  // The messages of the job's ranks here that overlap [from_ns, to_ns]
  // (to_ns 0: no end). A job with no rank here has none.
  Result<LogFindings> probe(std::string_view job_id, int64_t from_ns, int64_t to_ns) const;

  // Adds the messages of one rank's log region that overlap the window to
  // `findings`: the reading of a region, apart from the file it lies in.
  static void addRegion(std::span<const std::byte> region, uint32_t rank, int64_t from_ns, int64_t to_ns,
                        LogFindings& findings);

  std::filesystem::path logOf(pid_t pid) const;

  // The signal the rank's agent marked in its log as the one it is ending
  // by (0: none, no log, or a file not owned by `uid`: another user's file
  // must not make a crash look like a cancellation).
  int endingSignalOf(pid_t pid, uid_t uid) const;

 private:
  // Maps the file for as long as it is read; a missing or empty file adds
  // nothing (the rank's agent has not started, or it ended).
  static void addFile(const std::filesystem::path& path, uint32_t rank, int64_t from_ns, int64_t to_ns,
                      LogFindings& findings);

  const JobRegistry& jobs_;
  std::filesystem::path log_dir_;
};

}  // namespace nk
