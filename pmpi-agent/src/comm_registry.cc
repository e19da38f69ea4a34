#include "comm_registry.h"

namespace nk::pmpi {

void CommRegistry::add(uint64_t handle, std::string id, std::vector<uint32_t> world_ranks) {
  std::lock_guard lock(mutex_);
  by_handle_[handle] = Info{std::move(id), std::move(world_ranks), 0, 0};
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
  if (it == by_handle_.end() || rank < 0 || static_cast<size_t>(rank) >= it->second.world_ranks.size())
    return std::nullopt;
  return it->second.world_ranks[static_cast<size_t>(rank)];
}

std::vector<std::pair<std::string, uint64_t>> CommRegistry::progress() const {
  std::lock_guard lock(mutex_);
  std::vector<std::pair<std::string, uint64_t>> out;
  out.reserve(by_handle_.size());
  for (const auto& [handle, info] : by_handle_) out.emplace_back(info.id, info.collectives);
  return out;
}

}  // namespace nk::pmpi
