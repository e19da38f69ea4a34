#include "dependence_tracker.h"

#include <algorithm>

namespace nk::client {

namespace {

bool writes(DependenceKind kind) { return kind != DependenceKind::kIn; }

void addEdge(std::vector<DependenceEdge>& edges, size_t first_of_task, DependenceEdge edge) {
  if (edge.from == 0 || edge.from == edge.to) return;
  // A task that names one address twice (depend(in: x) depend(out: x)) gets
  // each edge once.
  for (size_t i = first_of_task; i < edges.size(); ++i)
    if (edges[i].from == edge.from && edges[i].address == edge.address) {
      if (writes(edge.kind)) edges[i].kind = edge.kind;
      return;
    }
  edges.push_back(edge);
}

}  // namespace

void DependenceTracker::declare(uint64_t task, std::span<const Dependence> deps, std::vector<DependenceEdge>& edges) {
  const size_t first = edges.size();
  // All predecessors are found before any state changes, so that a task's
  // own earlier entries (in, then out, on one address) do not order it
  // after itself or hide the task it really waits for.
  states_.clear();
  for (const Dependence& dep : deps) {
    AddressState& state = by_address_[dep.address];  // a new one has no writer: no edge
    states_.push_back(&state);
    if (!writes(dep.kind) || state.readers_since_write.empty()) {
      addEdge(edges, first, {state.last_writer, task, dep.address, dep.kind});
    } else {
      for (uint64_t reader : state.readers_since_write) addEdge(edges, first, {reader, task, dep.address, dep.kind});
    }
  }
  for (size_t i = 0; i < deps.size(); ++i) {
    const Dependence& dep = deps[i];
    AddressState& state = *states_[i];
    if (writes(dep.kind)) {
      state.last_writer = task;
      state.readers_since_write.clear();
    } else if (std::find(state.readers_since_write.begin(), state.readers_since_write.end(), task) ==
               state.readers_since_write.end()) {
      state.readers_since_write.push_back(task);
    }
  }
}

}  // namespace nk::client
