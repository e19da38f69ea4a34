#include "dependence_tracker.h"

#include <algorithm>

namespace nk::client {

namespace {

bool writes(DependenceKind kind) { return kind == DependenceKind::kOut || kind == DependenceKind::kInout; }

}  // namespace

void DependenceTracker::declare(uint64_t task, std::span<const Dependence> deps, std::vector<DependenceEdge>& edges) {
  if (deps.size() == 1) {
    // The common case, nothing to merge. (Copied into merged_ it was read
    // back with one 16-byte load over the caller's two fresh stores, which
    // the core cannot forward: half of this call's time on a chain.)
    declareOne(task, deps[0].address, deps[0].kind, edges);
    return;
  }
  // One entry per address, in the order they first appear.
  merged_.clear();
  // A few addresses (the usual case) are compared directly; many (an
  // iterator over an array) through a map, to stay linear.
  constexpr size_t kCompared = 16;
  const bool mapped = deps.size() > kCompared;
  if (mapped) merged_at_.clear();
  for (const Dependence& dep : deps) {
    Dependence* same = nullptr;
    if (mapped) {
      auto [it, inserted] = merged_at_.try_emplace(dep.address, merged_.size());
      if (!inserted) same = &merged_[it->second];
    } else {
      auto found = std::find_if(merged_.begin(), merged_.end(), [&](const Dependence& d) { return d.address == dep.address; });
      if (found != merged_.end()) same = &*found;
    }
    if (!same) {
      merged_.push_back(dep);
    } else if (writes(dep.kind)) {
      same->kind = dep.kind;
    } else if (same->kind != dep.kind && !writes(same->kind)) {
      same->kind = DependenceKind::kInout;  // two different non-writing kinds: libomp makes it a write
    }
  }
  for (const Dependence& dep : merged_) declareOne(task, dep.address, dep.kind, edges);
}

DependenceTracker::AddressState& DependenceTracker::stateOf(uint64_t address) {
  // Dependence addresses are at least 8 bytes apart, and often a cache line.
  Recent& recent = recent_[((address >> 3) ^ (address >> 6)) % recent_.size()];
  if (recent.state == nullptr || recent.address != address) recent = {address, &by_address_[address]};
  return *recent.state;
}

void DependenceTracker::declareOne(uint64_t task, uint64_t address, DependenceKind kind,
                                   std::vector<DependenceEdge>& edges) {
  AddressState& state = stateOf(address);
  auto waitFor = [&](const std::vector<uint64_t>& group) {
    for (uint64_t from : group)
      if (from != 0 && from != task) edges.push_back({from, task, address, kind});
  };
  if (state.last.empty()) {
    // The first task to name the address: nothing to wait for.
  } else if (!writes(kind) && state.last_kind == kind) {
    // Joins the current set: waits for what the set waits for.
    waitFor(state.before);
    state.last.push_back(task);
    return;
  } else {
    waitFor(state.last);
  }
  if (writes(kind)) {
    state.before.clear();
  } else {
    state.before.swap(state.last);  // a new set, after the latest group
  }
  state.last.clear();
  state.last.push_back(task);
  state.last_kind = kind;
}

}  // namespace nk::client
