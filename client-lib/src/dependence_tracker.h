#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace nk::client {

// Values as in tasks.proto's DependenceKind.
enum class DependenceKind : uint8_t { kIn = 1, kOut = 2, kInout = 3, kMutexinoutset = 4, kInoutset = 5 };

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
// addresses they declare. libomp cannot be asked for this graph: its
// task_dependence callback fires only while the predecessor is unfinished.
//
// The convention (docs/task-dependences.md has it with examples): OpenMP
// 5.1's depend-clause rules (section 2.19.11), among sibling tasks, with
// only the nearest predecessors on each address kept, as libomp links
// them. Per address, the tasks that named it form a sequence of groups: an
// out or inout task is a group of its own, and consecutive tasks of one of
// the kinds in, mutexinoutset and inoutset form one group (a "set": they are
// not ordered among themselves; mutexinoutset ones only exclude each
// other). A task waits for every task of the group before its own:
//   in            after the last out/inout task, or every task of the last
//                 mutexinoutset or inoutset set;
//   out, inout    after the last group, whatever it is (the last writer, or
//                 every in/mutexinoutset/inoutset task since);
//   mutexinoutset after the group before it (the last writer, or the last
//                 in or inoutset set), not after other mutexinoutset tasks
//                 of its own set;
//   inoutset      likewise, with inoutset in place of mutexinoutset.
// Tasks further back are ordered before those by the same rules, so their
// edges would add nothing. Edges to finished tasks are kept: the graph is
// the program's, not the scheduler's.
//
// What libomp reports is what counts: `out` comes as `inout` (both write:
// the edges are the same), a depobj as the kind stored in it, an array
// section (depend(in: a[i][0:n])) as the address of its first element, so
// two sections meet only if they start at the same address. A task naming
// one address more than once uses it once, as libomp does: with one kind
// if all say the same, else as a writer (labelled with its out or inout
// entry, or inout).
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
    // The latest group (one writer, or a set's tasks) and, when that is a
    // set, the group before it, which each new member of the set waits for.
    std::vector<uint64_t> last;
    std::vector<uint64_t> before;
    DependenceKind last_kind = DependenceKind::kIn;  // meaningless while `last` is empty
  };
  void declareOne(uint64_t task, uint64_t address, DependenceKind kind, std::vector<DependenceEdge>& edges);

  AddressState& stateOf(uint64_t address);

  std::unordered_map<uint64_t, AddressState> by_address_;
  // In front of by_address_, direct-mapped: the same few addresses come
  // back task after task (a chain, a block's neighbours), and the map's
  // lookup (a division by a prime, a node to chase) was a fifth of a
  // dependence's cost. Its states stay put and are never erased.
  struct Recent {
    uint64_t address = 0;
    AddressState* state = nullptr;
  };
  std::array<Recent, 16> recent_{};
  // Scratch for declare(): one entry per address, and where each is.
  std::vector<Dependence> merged_;
  std::unordered_map<uint64_t, size_t> merged_at_;
};

}  // namespace nk::client
