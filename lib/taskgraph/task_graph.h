#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nk {

// Values as in tasks.proto's TaskState (Temanejo's Figure 1).
enum class TaskState : uint8_t { kNotQueued = 1, kQueued = 2, kRunning = 3, kFinished = 4 };

// One event as the graph needs it, whatever runtime or wire format it came
// from (OMPT, the C API, Ayudame, a recording).
struct GraphEvent {
  enum class Type : uint8_t { kCreated, kDependence, kQueued, kStarted, kFinished, kFailed };
  Type type = Type::kCreated;
  int64_t timestamp_ns = 0;
  uint64_t task = 0;
  uint64_t parent = 0;          // kCreated
  std::string_view function;    // kCreated; empty: unknown
  int32_t priority = 0;         // kCreated
  uint64_t from = 0;            // kDependence: the predecessor; `task` is the successor
  uint64_t address = 0;         // kDependence
  uint8_t kind = 0;             // kDependence: tasks.proto's DependenceKind
  int32_t thread = -1;          // kStarted
};

// The live task graph of one session. Events may arrive out of order (one
// thread's batch overtaking another's): a dependence or a state change for
// a task not yet created makes a placeholder that the creation fills in,
// and a state never moves backwards. Kept compact, since a session may
// hold millions of tasks: function names interned, and nodes and edges in
// deques, which grow a block at a time: a vector of millions of tasks
// copied them all each time it grew, holding the app's event stream for
// seconds on a busy host (4.4 s at 4 M tasks), long enough for lossless
// mode to take a live daemon for a stuck one.
class TaskGraph {
 public:
  struct Task {
    uint64_t id = 0;
    uint64_t parent = 0;
    int64_t created_ns = 0, started_ns = 0, finished_ns = 0;
    uint32_t function = 0;      // index into functions(); 0 = unknown
    int32_t priority = 0;
    int32_t thread = -1;        // that ran it
    TaskState state = TaskState::kNotQueued;
    bool created = false;       // false: a placeholder so far
    bool failed = false;
  };
  struct Edge {
    uint64_t from = 0, to = 0, address = 0;
    uint8_t kind = 0;
  };
  struct FunctionStats {
    uint64_t runs = 0;
    int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  };

  TaskGraph();

  void apply(const GraphEvent& event);

  const std::deque<Task>& tasks() const { return tasks_; }
  const std::deque<Edge>& edges() const { return edges_; }
  const Task* find(uint64_t id) const;
  // Where the task is in tasks(), if the graph has it.
  std::optional<uint32_t> indexOf(uint64_t id) const;
  const std::vector<std::string>& functions() const { return functions_; }
  // Tasks per state, indexed by TaskState's value.
  const std::array<uint64_t, 5>& countsByState() const { return by_state_; }
  // Run times of finished tasks, per function index.
  const std::vector<FunctionStats>& functionStats() const { return stats_; }
  // Events that named no task (id 0) and were dropped.
  uint64_t rejected() const { return rejected_; }
  // What the graph holds, from its containers' capacities (not counting
  // the allocator's own overhead).
  size_t approximateBytes() const;

 private:
  Task& taskFor(uint64_t id);
  uint32_t intern(std::string_view function);
  uint32_t internSlow(std::string_view function);
  void moveTo(Task& task, TaskState state);

  // Where a task is in tasks_, or kNone.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t positionOf(uint64_t id) const;
  void remember(uint64_t id, uint32_t position);

  std::deque<Task> tasks_;
  // Ids as libnodekeeper makes them (a thread slot above bit 40, a serial
  // below) and small runtime ids are dense: per-slot tables indexed by
  // serial find them without hashing, in a tenth of the memory. Ids that
  // would leave a big gap in a table (pointers used as ids) are hashed.
  static constexpr int kSerialBits = 40;
  static constexpr uint64_t kMaxSlots = 1024;
  static constexpr uint64_t kMaxGap = 1 << 16;
  std::vector<std::vector<uint32_t>> dense_;      // [slot][serial] -> position
  std::unordered_map<uint64_t, uint32_t> index_;  // other ids -> position
  std::deque<Edge> edges_;
  std::vector<std::string> functions_;
  // Transparent, so a name is looked up as a string_view without a copy.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> function_index_;
  std::vector<FunctionStats> stats_;
  uint32_t last_index_ = 0;  // the function interned last
  std::array<uint64_t, 5> by_state_{};
  uint64_t rejected_ = 0;
};

}  // namespace nk
