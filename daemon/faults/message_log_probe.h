#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "faults/prober.h"
#include "wire/message_log.h"

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

  // `log_warning` hears once per file of a log that is ignored because
  // another user planted it (it may be empty).
  MessageLogProbe(const JobRegistry& jobs, std::filesystem::path log_dir,
                  std::function<void(const std::string&)> log_warning = {});

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
  static void addEntries(const std::vector<wire::MessageLog::Entry>& entries, uint32_t rank, int64_t from_ns,
                         int64_t to_ns, LogFindings& findings);
  // Copies the file (twice) to read it; a missing or empty file adds
  // nothing (the rank's agent has not started, or it ended), and neither
  // does a symlink or a file not owned by `owner`, the job's user: /dev/shm
  // is anyone's to write, and another user's file must not put messages
  // into the job's fault report.
  void addFile(const std::filesystem::path& path, uid_t owner, uint32_t rank, int64_t from_ns, int64_t to_ns,
               LogFindings& findings) const;
  void warnOnce(const std::filesystem::path& path, const std::string& why) const;

  const JobRegistry& jobs_;
  std::filesystem::path log_dir_;
  std::function<void(const std::string&)> log_warning_;
  mutable std::mutex warned_mutex_;
  mutable std::set<std::string> warned_;
};

}  // namespace nk
