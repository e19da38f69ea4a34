#include "tasks/recording_quota.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace nk {

namespace {

// Indices of the ended recordings, oldest ended first (ties by path, so
// that the order never depends on the order given).
std::vector<size_t> endedOldestFirst(std::span<const RecordingQuota::Recording> recordings) {
  std::vector<size_t> order;
  for (size_t i = 0; i < recordings.size(); ++i)
    if (recordings[i].ended) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (*recordings[a].ended != *recordings[b].ended) return *recordings[a].ended < *recordings[b].ended;
    return recordings[a].path < recordings[b].path;
  });
  return order;
}

std::string describeAge(std::chrono::seconds age) {
  auto hours = std::chrono::duration_cast<std::chrono::hours>(age).count();
  if (hours > 0 && hours % 24 == 0) return std::to_string(hours / 24) + (hours == 24 ? " day" : " days");
  if (hours > 0 && age.count() % 3600 == 0) return std::to_string(hours) + (hours == 1 ? " hour" : " hours");
  return std::to_string(age.count()) + " s";
}

}  // namespace

std::string RecordingQuota::describeBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (value == static_cast<double>(static_cast<uint64_t>(value)))
    std::snprintf(text, sizeof text, "%llu %s", static_cast<unsigned long long>(value), kUnits[unit]);
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::vector<RecordingQuota::Removal> RecordingQuota::sweep(std::span<const Recording> recordings,
                                                           Clock::time_point now) const {
  std::vector<Removal> removals;
  std::vector<bool> removed(recordings.size(), false);
  std::map<uid_t, uint64_t> by_user;
  uint64_t total = 0;
  for (const Recording& r : recordings) {
    by_user[r.owner] += r.bytes;
    total += r.bytes;
  }
  auto remove = [&](size_t i, std::string reason) {
    removed[i] = true;
    by_user[recordings[i].owner] -= recordings[i].bytes;
    total -= recordings[i].bytes;
    removals.push_back({recordings[i].path, recordings[i].bytes, std::move(reason)});
  };
  const std::vector<size_t> order = endedOldestFirst(recordings);
  for (size_t i : order)
    if (now - *recordings[i].ended > limits_.max_age) remove(i, "ended more than " + describeAge(limits_.max_age) + " ago");
  for (size_t i : order) {
    uid_t owner = recordings[i].owner;
    if (!removed[i] && by_user[owner] > limits_.per_user_bytes)
      remove(i, "uid " + std::to_string(owner) + "'s recordings over their quota of " +
                    describeBytes(limits_.per_user_bytes));
  }
  for (size_t i : order)
    if (!removed[i] && total > limits_.total_bytes)
      remove(i, "all recordings over the total quota of " + describeBytes(limits_.total_bytes));
  return removals;
}

RecordingQuota::Growth RecordingQuota::grow(std::span<const Recording> recordings, uid_t owner, uint64_t bytes) const {
  uint64_t user = 0, user_live = 0, total = 0, total_live = 0;
  for (const Recording& r : recordings) {
    total += r.bytes;
    if (!r.ended) total_live += r.bytes;
    if (r.owner != owner) continue;
    user += r.bytes;
    if (!r.ended) user_live += r.bytes;
  }
  Growth growth;
  // Checked before anything is removed: a refused growth removes nothing.
  if (user_live > limits_.per_user_bytes || bytes > limits_.per_user_bytes - user_live) {
    growth.allowed = false;
    growth.refusal = "uid " + std::to_string(owner) + "'s live recordings reached their quota of " +
                     describeBytes(limits_.per_user_bytes);
    return growth;
  }
  if (total_live > limits_.total_bytes || bytes > limits_.total_bytes - total_live) {
    growth.allowed = false;
    growth.refusal = "live recordings reached the total quota of " + describeBytes(limits_.total_bytes);
    return growth;
  }
  const std::vector<size_t> order = endedOldestFirst(recordings);
  std::vector<bool> removed(recordings.size(), false);
  // The owner's own recordings first: their quota is theirs to spend, and
  // what that frees counts towards the total too.
  for (size_t i : order) {
    if (user + bytes <= limits_.per_user_bytes) break;
    if (recordings[i].owner != owner) continue;
    removed[i] = true;
    user -= recordings[i].bytes;
    total -= recordings[i].bytes;
    growth.removals.push_back({recordings[i].path, recordings[i].bytes,
                               "uid " + std::to_string(owner) + "'s recordings over their quota of " +
                                   describeBytes(limits_.per_user_bytes)});
  }
  for (size_t i : order) {
    if (total + bytes <= limits_.total_bytes) break;
    if (removed[i]) continue;
    total -= recordings[i].bytes;
    growth.removals.push_back({recordings[i].path, recordings[i].bytes,
                               "all recordings over the total quota of " + describeBytes(limits_.total_bytes)});
  }
  return growth;
}

}  // namespace nk
