#include "connection_limits.h"

namespace nk {

ConnectionLimits::Admission ConnectionLimits::admit(uid_t uid, Clock::time_point now) {
  Admission admission;
  const bool exempt = uid == 0;
  uint32_t& mine = open_by_user_[uid];
  const bool over_user = mine >= settings_.per_user;
  const bool over_total = open_ >= settings_.total;
  if (exempt || (!over_user && !over_total)) {
    ++mine;
    ++open_;
    admission.admitted = true;
    return admission;
  }
  if (mine == 0) open_by_user_.erase(uid);
  admission.over_total = !over_user;
  RefusalLog& log = refusals_[uid];
  ++log.unlogged;
  if (!log.ever_logged || now - log.last_logged >= kRefusalLogPeriod) {
    admission.log_refusal = true;
    admission.refusals_since_last_log = log.unlogged;
    log.unlogged = 0;
    log.last_logged = now;
    log.ever_logged = true;
  }
  return admission;
}

void ConnectionLimits::release(uid_t uid) {
  auto it = open_by_user_.find(uid);
  if (it == open_by_user_.end() || it->second == 0) return;
  if (--it->second == 0) open_by_user_.erase(it);
  if (open_ > 0) --open_;
}

size_t ConnectionLimits::openBy(uid_t uid) const {
  auto it = open_by_user_.find(uid);
  return it == open_by_user_.end() ? 0 : it->second;
}

}  // namespace nk
