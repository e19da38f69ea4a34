#include "api/stream_host.h"

#include <malloc.h>

#include <chrono>
#include <utility>

namespace nk {

StreamHost::Slot& StreamHost::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    if (host_) host_->releaseSlot(uid_);
    host_ = std::exchange(other.host_, nullptr);
    uid_ = other.uid_;
    pid_ = other.pid_;
  }
  return *this;
}

StreamHost::Slot::~Slot() {
  if (host_) host_->releaseSlot(uid_);
}

StreamHost::StreamHost(Settings settings, std::function<void(const std::string&)> log_warning)
    : settings_(settings),
      log_warning_(std::move(log_warning)),
      limits_(settings.streams),
      pump_(settings.pump_period) {}

Result<StreamHost::Slot> StreamHost::admit(const PeerCredentials& peer, std::string_view method) {
  std::string why;
  bool log = false;
  uint64_t refused = 0;
  {
    std::lock_guard lock(mutex_);
    auto admission = limits_.admit(peer.uid, ConnectionLimits::Clock::now());
    if (admission.admitted) return Slot(this, peer.uid, peer.pid);
    why = admission.over_total ? "the daemon has " + std::to_string(limits_.open()) +
                                     " streams open, the most it takes (streams_total " +
                                     std::to_string(settings_.streams.total) + ")"
                               : "uid " + std::to_string(peer.uid) + " has " + std::to_string(limits_.openBy(peer.uid)) +
                                     " open, the most one user may have (streams_per_user " +
                                     std::to_string(settings_.streams.per_user) + ")";
    log = admission.log_refusal;
    refused = admission.refusals_since_last_log;
  }
  if (log && log_warning_)
    log_warning_("refusing " + std::string(method) + " streams of uid " + std::to_string(peer.uid) + " (pid " +
                 std::to_string(peer.pid) + "): " + why + "; " + std::to_string(refused) +
                 " refused since this was last logged (logged at most once a minute per user)");
  return resourceExhausted("no more streams: " + why);
}

void StreamHost::heldToRate(uid_t uid, pid_t pid, std::string_view method) {
  if (mayLog(uid) && log_warning_)
    log_warning_("holding a " + std::string(method) + " stream of uid " + std::to_string(uid) + " (pid " +
                 std::to_string(pid) + ") to " + std::to_string(settings_.messages_per_second) +
                 " messages a second (stream_messages_per_second): it sent faster; logged at most once a minute "
                 "per user");
}

bool StreamHost::mayLog(uid_t uid) {
  std::lock_guard lock(mutex_);
  auto it = rate_logs_.try_emplace(uid, 1, std::chrono::minutes(1)).first;
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  return it->second.admit(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()).log;
}

size_t StreamHost::open() const {
  std::lock_guard lock(mutex_);
  return streams_.size();
}

void StreamHost::releaseSlot(uid_t uid) {
  std::lock_guard lock(mutex_);
  limits_.release(uid);
}

void StreamHost::releaseObject(const void* stream) {
  std::shared_ptr<void> doomed;
  bool trim = false;
  {
    std::lock_guard lock(mutex_);
    auto it = streams_.find(stream);
    if (it == streams_.end()) return;
    doomed = std::move(it->second);
    streams_.erase(it);
    trim = ++released_since_trim_ >= kReleasesPerTrim && streams_.empty();
    if (trim) released_since_trim_ = 0;
  }
  // Destroyed outside the lock: its slot gives itself back through it.
  doomed.reset();
  // Thousands of streams gone at once (a client that held many was killed)
  // leave their memory in malloc's free lists; give it back to the system.
  if (trim) malloc_trim(0);
}

}  // namespace nk
