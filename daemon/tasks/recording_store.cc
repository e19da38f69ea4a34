#include "tasks/recording_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace nk {

namespace {

// Reads the digits at the front of `text` into `value` and moves past them.
template <typename T>
bool takeNumber(std::string_view& text, T& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return true;
}

bool takePrefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// Closes a descriptor when it goes.
struct FdCloser {
  int fd = -1;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

RecordingStore::RecordingStore(std::filesystem::path dir, Options options)
    : dir_(std::move(dir)), options_(std::move(options)), quota_(options_.limits) {
  last_sweep_ = options_.clock();
  scan();
}

std::string RecordingStore::fileName(uint64_t session, pid_t pid, uid_t owner) {
  return "session-" + std::to_string(session) + "-pid" + std::to_string(pid) + "-uid" + std::to_string(owner) +
         ".nkrec";
}

std::optional<RecordingStore::NameParts> RecordingStore::parseName(std::string_view name) {
  NameParts parts;
  pid_t pid = 0;
  if (!takePrefix(name, "session-") || !takeNumber(name, parts.session)) return std::nullopt;
  if (!takePrefix(name, "-pid") || !takeNumber(name, pid)) return std::nullopt;
  if (takePrefix(name, "-uid")) {
    uid_t owner = 0;
    if (!takeNumber(name, owner)) return std::nullopt;
    parts.owner = owner;
  }
  // ".old": a recording an earlier daemon moved aside (its name was taken).
  if (name != ".nkrec" && name != ".nkrec.old") return std::nullopt;
  return parts;
}

void RecordingStore::scan() {
  int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return;  // not made yet: nothing recorded
  FdCloser closer{dir_fd};
  std::error_code ec;
  std::lock_guard lock(mutex_);
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    auto parts = parseName(name);
    if (!parts) continue;
    struct stat st{};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    Entry recorded;
    recorded.owner = parts->owner.value_or(st.st_uid);
    recorded.bytes = static_cast<uint64_t>(st.st_size);
    recorded.ended = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
        std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
    entries_[(dir_ / name).string()] = recorded;
    by_user_[recorded.owner] += recorded.bytes;
    total_ += recorded.bytes;
    highest_session_ = std::max(highest_session_, parts->session);
  }
}

std::vector<RecordingQuota::Recording> RecordingStore::recordingsLocked() const {
  std::vector<RecordingQuota::Recording> all;
  all.reserve(entries_.size());
  for (const auto& [path, entry] : entries_) all.push_back({path, entry.owner, entry.bytes, entry.ended});
  return all;
}

bool RecordingStore::fitsLocked(uid_t owner, uint64_t bytes) const {
  auto user = by_user_.find(owner);
  uint64_t used = user == by_user_.end() ? 0 : user->second;
  const RecordingLimits& limits = quota_.limits();
  return used <= limits.per_user_bytes && bytes <= limits.per_user_bytes - used && total_ <= limits.total_bytes &&
         bytes <= limits.total_bytes - total_;
}

void RecordingStore::addLocked(const std::string& path, uint64_t bytes) {
  Entry& entry = entries_[path];
  entry.bytes += bytes;
  by_user_[entry.owner] += bytes;
  total_ += bytes;
}

RecordingStore::Growth RecordingStore::growLocked(const std::string& path, uint64_t bytes) {
  Entry& entry = entries_.at(path);
  Growth growth;
  if (!fitsLocked(entry.owner, bytes)) {
    auto plan = quota_.grow(recordingsLocked(), entry.owner, bytes);
    if (!plan.allowed) {
      growth.allowed = false;
      growth.refusal = std::move(plan.refusal);
      return growth;
    }
    growth.removed = removeLocked(std::move(plan.removals));
    // A removal that failed leaves its bytes counted.
    if (!fitsLocked(entry.owner, bytes)) {
      growth.allowed = false;
      growth.refusal = "ended recordings that would make room could not be removed";
      return growth;
    }
  }
  addLocked(path, bytes);
  return growth;
}

RecordingStore::Growth RecordingStore::admit(const std::filesystem::path& recording, uid_t owner, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  // Counted as a live recording of nothing first, so that the quota sees
  // whose it is and never picks it for removal.
  const std::string path = recording.string();
  entries_[path] = Entry{owner, 0, std::nullopt};
  Growth growth = growLocked(path, bytes);
  if (!growth.allowed) entries_.erase(path);
  return growth;
}

RecordingStore::Growth RecordingStore::grow(const std::filesystem::path& recording, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const std::string path = recording.string();
  if (!entries_.contains(path)) {
    Growth refused;
    refused.allowed = false;
    refused.refusal = recording.string() + " is not a live recording";
    return refused;
  }
  return growLocked(path, bytes);
}

RecordingStore::Reservation RecordingStore::reserve(const std::filesystem::path& recording, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  const std::string path = recording.string();
  auto it = entries_.find(path);
  if (it == entries_.end()) return Reservation::kGone;
  if (!fitsLocked(it->second.owner, bytes)) return Reservation::kNoRoom;
  addLocked(path, bytes);
  return Reservation::kReserved;
}

bool RecordingStore::replace(const std::filesystem::path& recording, const std::filesystem::path& rewritten,
                             uint64_t bytes, std::error_code& error) {
  error.clear();
  std::lock_guard lock(mutex_);
  auto it = entries_.find(recording.string());
  std::error_code ignored;
  if (it == entries_.end()) {
    std::filesystem::remove(rewritten, ignored);
    return false;
  }
  std::filesystem::rename(rewritten, recording, error);
  if (error) {
    std::filesystem::remove(rewritten, ignored);
    return false;
  }
  resizeLocked(it->second, bytes);
  return true;
}

void RecordingStore::resize(const std::filesystem::path& recording, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(recording.string());
  if (it == entries_.end()) return;
  resizeLocked(it->second, bytes);
}

void RecordingStore::resizeLocked(Entry& entry, uint64_t bytes) {
  by_user_[entry.owner] -= entry.bytes;
  total_ -= entry.bytes;
  entry.bytes = bytes;
  by_user_[entry.owner] += bytes;
  total_ += bytes;
}

void RecordingStore::discard(const std::filesystem::path& recording) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(recording.string());
  if (it == entries_.end()) return;
  by_user_[it->second.owner] -= it->second.bytes;
  total_ -= it->second.bytes;
  entries_.erase(it);
}

void RecordingStore::end(const std::filesystem::path& recording) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(recording.string());
  if (it != entries_.end()) it->second.ended = options_.clock();
}

RecordingStore::Removals RecordingStore::removeLocked(std::vector<RecordingQuota::Removal> removals) {
  Removals removed;
  if (removals.empty()) return removed;
  // Relative to the directory, never through a link: only the regular
  // files this store counted under their recording names go.
  int dir_fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) {
    options_.warn("cannot open the recordings directory " + dir_.string() + " to remove ended recordings: " +
                  std::strerror(errno));
    return removed;
  }
  FdCloser closer{dir_fd};
  for (RecordingQuota::Removal& removal : removals) {
    auto it = entries_.find(removal.path.string());
    if (it == entries_.end() || !it->second.ended) continue;
    const std::string name = removal.path.filename().string();
    if (removal.path.parent_path() != dir_ || !parseName(name)) continue;
    struct stat st{};
    int gone = 0;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      gone = errno;
    } else if (!S_ISREG(st.st_mode)) {
      gone = EINVAL;  // replaced by something else: forgotten, left alone
    } else if (::unlinkat(dir_fd, name.c_str(), 0) != 0) {
      options_.warn("cannot remove the ended recording " + removal.path.string() + ": " + std::strerror(errno));
      continue;
    }
    by_user_[it->second.owner] -= it->second.bytes;
    total_ -= it->second.bytes;
    entries_.erase(it);
    if (gone == 0 || gone == ENOENT) removed.push_back(std::move(removal));
  }
  return removed;
}

RecordingStore::Removals RecordingStore::sweepLocked() {
  last_sweep_ = options_.clock();
  return removeLocked(quota_.sweep(recordingsLocked(), last_sweep_));
}

RecordingStore::Removals RecordingStore::sweep() {
  std::lock_guard lock(mutex_);
  return sweepLocked();
}

RecordingStore::Removals RecordingStore::sweepIfDue() {
  std::lock_guard lock(mutex_);
  if (options_.clock() - last_sweep_ < options_.sweep_interval) return {};
  return sweepLocked();
}

uint64_t RecordingStore::totalBytes() const {
  std::lock_guard lock(mutex_);
  return total_;
}

uint64_t RecordingStore::userBytes(uid_t owner) const {
  std::lock_guard lock(mutex_);
  auto it = by_user_.find(owner);
  return it == by_user_.end() ? 0 : it->second;
}

}  // namespace nk
