#include "comm_registry.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace nk::pmpi {

namespace {

// Past this a member list in an id becomes a hash: ids travel in every
// heartbeat and symptom.
constexpr size_t kLongestMemberText = 40;

// Names a group in an id: its ranks, or a hash of them for a long list.
std::string groupText(std::span<const uint32_t> ranks) {
  std::string text = CommRegistry::rankList(ranks);
  if (text.size() <= kLongestMemberText) return text;
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (uint32_t r : ranks)
    for (int i = 0; i < 4; ++i) {
      h ^= (r >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%zu:%016" PRIx64, ranks.size(), h);
  return hex;
}

}  // namespace

std::vector<uint32_t> CommRegistry::Info::allWorldRanks() const {
  std::vector<uint32_t> all = world_ranks;
  all.insert(all.end(), remote_world_ranks.begin(), remote_world_ranks.end());
  return all;
}

void CommRegistry::add(uint64_t handle, std::string id, std::vector<uint32_t> world_ranks,
                       std::vector<uint32_t> remote_world_ranks) {
  std::lock_guard lock(mutex_);
  by_handle_[handle] = Info{std::move(id), std::move(world_ranks), std::move(remote_world_ranks), 0, 0};
}

std::string CommRegistry::childId(uint64_t parent, std::optional<int> colour) {
  std::lock_guard lock(mutex_);
  auto it = by_handle_.find(parent);
  std::string base = it == by_handle_.end() ? std::string("unknown") : it->second.id;
  uint64_t n = it == by_handle_.end() ? 0 : ++it->second.children;
  std::string id = base + "." + std::to_string(n);
  if (colour) id += "c" + std::to_string(*colour);
  return id;
}

std::string CommRegistry::memberChildId(uint64_t parent, std::span<const uint32_t> members) {
  std::string base;
  {
    std::lock_guard lock(mutex_);
    auto it = by_handle_.find(parent);
    base = it == by_handle_.end() ? std::string("unknown") : it->second.id;
  }
  return countedId(base + ".g[" + groupText(members) + "]");
}

std::string CommRegistry::interId(std::span<const uint32_t> local, std::span<const uint32_t> remote) {
  auto lowest = [](std::span<const uint32_t> ranks) {
    uint32_t low = kUnmapped;
    for (uint32_t r : ranks) low = std::min(low, r);
    return low;
  };
  bool local_first = lowest(local) <= lowest(remote);
  std::span<const uint32_t> first = local_first ? local : remote, second = local_first ? remote : local;
  return countedId("inter[" + groupText(first) + "|" + groupText(second) + "]");
}

std::string CommRegistry::countedId(const std::string& key) {
  std::lock_guard lock(mutex_);
  return key + "." + std::to_string(++creations_by_members_[key]);
}

void CommRegistry::remove(uint64_t handle) {
  std::lock_guard lock(mutex_);
  by_handle_.erase(handle);
}

std::optional<CommRegistry::Info> CommRegistry::find(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return std::nullopt;
  return it->second;
}

uint64_t CommRegistry::enterCollective(uint64_t handle) {
  std::lock_guard lock(mutex_);
  auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? 0 : ++it->second.collectives;
}

std::optional<uint32_t> CommRegistry::worldRank(uint64_t handle, int rank) const {
  std::lock_guard lock(mutex_);
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end() || rank < 0) return std::nullopt;
  const Info& info = it->second;
  const std::vector<uint32_t>& peers = info.isInter() ? info.remote_world_ranks : info.world_ranks;
  if (static_cast<size_t>(rank) >= peers.size() || peers[static_cast<size_t>(rank)] == kUnmapped)
    return std::nullopt;
  return peers[static_cast<size_t>(rank)];
}

std::vector<std::pair<std::string, uint64_t>> CommRegistry::progress() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, uint64_t>> out;
  out.reserve(by_handle_.size());
  for (const auto& [handle, info] : by_handle_) out.emplace_back(info.id, info.collectives);
  return out;
}

std::string CommRegistry::rankList(std::span<const uint32_t> ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j] != kUnmapped && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += ranks[i] == kUnmapped ? std::string("?") : std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace nk::pmpi
