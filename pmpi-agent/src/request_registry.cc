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

size_t RequestRegistry::size() const {
  std::lock_guard lock(mutex_);
  return by_request_.size();
}

}  // namespace nk::pmpi
