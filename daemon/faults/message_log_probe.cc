#include "faults/message_log_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "faults/job_registry.h"
#include "wire/message_log.h"

namespace nk {

namespace {

// No agent's log is this large; a bigger file is someone else's doing and
// is not read whole into the daemon's memory.
constexpr size_t kMaxLogBytes = 64u << 20;

// The file's first `size` bytes, copied: the file belongs to the job's user,
// who may truncate it, and a mapped page past the new end is SIGBUS, which
// would end the root daemon. Empty on a read error.
std::vector<std::byte> copyOf(int fd, size_t size) {
  std::vector<std::byte> copy(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, copy.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  copy.resize(done);
  return copy;
}

}  // namespace

MessageLogProbe::MessageLogProbe(const JobRegistry& jobs, std::filesystem::path log_dir,
                                 std::function<void(const std::string&)> log_warning)
    : jobs_(jobs), log_dir_(std::move(log_dir)), log_warning_(std::move(log_warning)) {}

std::filesystem::path MessageLogProbe::logOf(pid_t pid) const {
  return log_dir_ / ("nodekeeper-pmpi-" + std::to_string(pid) + ".log");
}

Result<LogFindings> MessageLogProbe::probe(std::string_view job_id, int64_t from_ns, int64_t to_ns) const {
  if (job_id.empty()) return invalidArgument("job_id is empty");
  if (to_ns != 0 && to_ns < from_ns) return invalidArgument("to_ns is before from_ns");
  LogFindings findings;
  findings.answered = true;
  auto job = jobs_.job(job_id);
  if (!job) return findings;
  for (const RankRecord& rank : job->ranks) addFile(logOf(rank.pid), job->uid, rank.rank, from_ns, to_ns, findings);
  return findings;
}

int MessageLogProbe::endingSignalOf(pid_t pid, uid_t uid) const {
  int fd = ::open(logOf(pid).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return 0;
  int signal = 0;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid && st.st_size > 0) {
    // The mark is in the header, within its first page.
    const std::vector<std::byte> header = copyOf(fd, std::min<size_t>(static_cast<size_t>(st.st_size), 4096));
    signal = wire::MessageLog::endingSignal(header);
  }
  ::close(fd);
  return signal;
}

void MessageLogProbe::addRegion(std::span<const std::byte> region, uint32_t rank, int64_t from_ns, int64_t to_ns,
                                LogFindings& findings) {
  addEntries(wire::MessageLog::read(region), rank, from_ns, to_ns, findings);
}

void MessageLogProbe::addEntries(const std::vector<wire::MessageLog::Entry>& entries, uint32_t rank, int64_t from_ns,
                                 int64_t to_ns, LogFindings& findings) {
  for (const auto& e : entries) {
    if (e.end_ns < from_ns || (to_ns != 0 && e.start_ns > to_ns)) continue;
    const bool failed = e.outcome != 0 || e.end_ns - e.start_ns > kSlowMessage.count();
    if (failed) ++findings.pending;
    if (findings.entries.size() >= kMaxEntries) continue;
    char line[256];
    std::snprintf(line, sizeof line, "rank %u %s peer %d tag %d %llu B %.3f ms rc %d%s", rank, e.operation.c_str(),
                  e.peer, e.tag, static_cast<unsigned long long>(e.bytes),
                  static_cast<double>(e.end_ns - e.start_ns) / 1e6, e.outcome, failed ? " (pending)" : "");
    findings.entries.emplace_back(line);
  }
}

void MessageLogProbe::addFile(const std::filesystem::path& path, uid_t owner, uint32_t rank, int64_t from_ns,
                              int64_t to_ns, LogFindings& findings) const {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) warnOnce(path, "it is a symlink");
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    warnOnce(path, "it is not a regular file");
    return;
  }
  if (st.st_uid != owner) {
    ::close(fd);
    warnOnce(path, "it is owned by uid " + std::to_string(st.st_uid) + ", not by the job's user (uid " +
                       std::to_string(owner) + ")");
    return;
  }
  if (static_cast<size_t>(st.st_size) > kMaxLogBytes) {
    ::close(fd);
    warnOnce(path, std::to_string(st.st_size) + " bytes is more than any agent writes");
    return;
  }
  if (st.st_size > 0) {
    // Two copies stand in for the agent's seqlock: an entry is kept when
    // its sequence number was the same in the later one.
    const auto size = static_cast<size_t>(st.st_size);
    const std::vector<std::byte> first = copyOf(fd, size);
    const std::vector<std::byte> later = copyOf(fd, size);
    addEntries(wire::MessageLog::read(first, later), rank, from_ns, to_ns, findings);
  }
  ::close(fd);
}

void MessageLogProbe::warnOnce(const std::filesystem::path& path, const std::string& why) const {
  // Bounded: a user who plants logs for many pids cannot grow this.
  constexpr size_t kMaxRemembered = 4096;
  {
    std::lock_guard lock(warned_mutex_);
    if (warned_.size() >= kMaxRemembered) warned_.clear();
    if (!warned_.insert(path.string()).second) return;
  }
  if (log_warning_) log_warning_("message log " + path.string() + " ignored: " + why);
}

}  // namespace nk
