#include "request_registry.h"

namespace nk::pmpi {

void RequestRegistry::add(uint64_t request, Entry entry) {
  std::lock_guard lock(mutex_);
  by_request_[request] = entry;
}

std::optional<RequestRegistry::Entry> RequestRegistry::find(uint64_t request) const {
  std::lock_guard lock(mutex_);
  auto it = by_request_.find(request);
  if (it == by_request_.end()) return std::nullopt;
  return it->second;
}

void RequestRegistry::completed(uint64_t request) {
  std::lock_guard lock(mutex_);
  auto it = by_request_.find(request);
  if (it != by_request_.end() && !it->second.persistent) by_request_.erase(it);
}

void RequestRegistry::freed(uint64_t request) {
  std::lock_guard lock(mutex_);
  by_request_.erase(request);
}

std::optional<RequestRegistry::Entry> RequestRegistry::latestCollective(std::span<const uint64_t> requests) const {
  std::lock_guard lock(mutex_);
  std::optional<Entry> latest;
  for (uint64_t request : requests) {
    auto it = by_request_.find(request);
    if (it == by_request_.end() || !it->second.collective) continue;
    const Entry& e = it->second;
    if (!latest || (e.communicator == latest->communicator && e.collective_seq > latest->collective_seq)) latest = e;
  }
  return latest;
}

size_t RequestRegistry::size() const {
  std::lock_guard lock(mutex_);
  return by_request_.size();
}

}  // namespace nk::pmpi
