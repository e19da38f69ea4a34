#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace nk::client {

// Values as in tasks.proto's DependenceKind.
enum class DependenceKind : uint8_t { kIn = 1, kOut = 2, kInout = 3 };

struct Dependence {
  uint64_t address = 0;
  DependenceKind kind = DependenceKind::kIn;
};

struct DependenceEdge {
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t address = 0;
  DependenceKind kind = DependenceKind::kIn;  // how `to` uses the address
};

// The dependence graph among the children of one task, rebuilt from the
// addresses they declare, with OpenMP's depend-clause rules: a reader waits
// for the last writer of its address; a writer waits for every reader since
// that writer, or for the writer itself when nobody read in between. libomp
// cannot be asked for this graph: its task_dependence callback fires only
// while the predecessor is unfinished, and it reports `out` as `inout`
// (both are writers here, so the edges are the same).
//
// Dependences only order sibling tasks, so there is one tracker per parent
// task, kept with the parent's task data: it is only touched by the thread
// that runs the parent, and needs no lock.
class DependenceTracker {
 public:
  // Appends to `edges` the edges that `task` gets from declaring `deps`
  // (no self-edges; one edge per predecessor and address).
  void declare(uint64_t task, std::span<const Dependence> deps, std::vector<DependenceEdge>& edges);

  size_t addresses() const { return by_address_.size(); }

 private:
  struct AddressState {
    uint64_t last_writer = 0;  // 0: none yet (task ids start at 1)
    std::vector<uint64_t> readers_since_write;
  };
  std::unordered_map<uint64_t, AddressState> by_address_;
  // Scratch for declare(): each dependence's state, looked up once
  // (references into the map survive its rehashing).
  std::vector<AddressState*> states_;
};

}  // namespace nk::client
