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
//
// A graph may be given a window (max_tasks): past it, finished tasks
// (created, finished or failed; never placeholders) are dropped from
// memory, oldest first, with the edges into them; a program of 30 M tasks
// would otherwise hold gigabytes in the daemon, and the recording keeps
// everything anyway. Unfinished tasks are never dropped, however old (in a
// recursive tree the oldest finish last), so the window is soft: a graph
// with more than max_tasks unfinished tasks holds them, up to maxHeld(). Dropping is
// done in compactions, each taking the graph down to 3/4 of the window,
// and only after the graph has grown by a quarter of what a compaction
// reads, so it costs O(1) per event amortised, whatever the order.
// Edges into dropped tasks go with them; one that arrived behind younger
// tasks' edges may stay in edges() until a later compaction (readers skip
// an edge whose successor is not held). An edge from a dropped
// predecessor into a held task stays (readers take a predecessor that is
// not held for finished). Totals (countsByState,
// functionStats, dependences, totalTasks, totalEdges) count dropped tasks
// too; positions in tasks() and edges() change at each compaction, and
// generation() says so. A late event for a dropped task (a state change or
// a dependence that another thread's batch carried in after the drop) is
// counted in lateEvents() and ignored, instead of making a placeholder that
// no creation would ever fill: a slot's task is known dropped when its
// serial is at most the highest dropped in its slot, as long as the slot's
// tasks were created in serial order (libnodekeeper's are: one thread makes
// a slot's ids); in other id spaces late events make placeholders, as in an
// unlimited graph. Without max_tasks (0) nothing is ever dropped.
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
    // Where the graph finds the edges into this task (a PairsAt), kept in
    // what would otherwise be padding.
    uint8_t pairs_at = 0;
  };
  // One address that orders a pair, and how the successor uses it
  // (tasks.proto's DependenceKind).
  struct Dependence {
    uint64_t address = 0;
    uint8_t kind = 0;
  };
  // One per (predecessor, successor), however many addresses order the
  // pair: the first dependence inline (most pairs have one), any more in a
  // side store, read with dependencesOf().
  struct Edge {
    uint64_t from = 0, to = 0;
    uint64_t address = 0;  // the first dependence's
    uint32_t more = kNoMore;  // the side store's newest entry for this pair
    uint8_t kind = 0;
  };
  static constexpr uint32_t kNoMore = UINT32_MAX;
  struct FunctionStats {
    uint64_t runs = 0;
    int64_t total_ns = 0, min_ns = 0, max_ns = 0;
    // Tasks of the function created and finished (or failed), dropped ones
    // included.
    uint64_t finished = 0;
  };

  TaskGraph();
  // Holds about max_tasks tasks at most (see above); 0: unlimited.
  explicit TaskGraph(size_t max_tasks);

  void apply(const GraphEvent& event);

  // The tasks held, in the order the graph met them.
  const std::deque<Task>& tasks() const { return tasks_; }
  // The pairs held, in the order their first dependence arrived.
  const std::deque<Edge>& edges() const { return edges_; }
  size_t maxTasks() const { return max_tasks_; }
  // With a window, the tasks held at most, unfinished ones included:
  // kMaxHeldPerWindow windows. Tasks created past it are not held (nor
  // their edges), only counted: the window drops finished tasks only, and
  // a client that never finishes its tasks would otherwise grow the graph
  // without end (5 M of them: 314 MB).
  static constexpr size_t kMaxHeldPerWindow = 4;
  size_t maxHeld() const { return max_held_; }
  uint64_t tasksNotHeld() const { return tasks_not_held_; }
  // Dependences on a successor not held (created past the bound): not in
  // totalEdges(), which counts pairs, and these were never paired.
  uint64_t dependencesNotHeld() const { return dependences_not_held_; }
  // Held and dropped.
  uint64_t totalTasks() const { return tasks_.size() + tasks_dropped_ + tasks_not_held_; }
  uint64_t totalEdges() const { return edges_.size() + edges_dropped_; }
  uint64_t tasksDropped() const { return tasks_dropped_; }
  uint64_t edgesDropped() const { return edges_dropped_; }
  // Changes whenever positions in tasks() or edges() change (a compaction):
  // a reader that keeps positions starts over.
  uint64_t generation() const { return generation_; }
  // Events for tasks already dropped, ignored.
  uint64_t lateEvents() const { return late_events_; }
  // Entries compactions have read, over the graph's life: so tests can tell
  // they stay amortised O(1) per event.
  uint64_t compactionReads() const { return compaction_reads_; }
  // The graph held the task and dropped it (as far as it can tell: see above).
  bool wasDropped(uint64_t id) const;
  // Dependences over all pairs (one per address a pair shares).
  uint64_t dependences() const { return dependences_; }
  // The pair's dependences in the order they arrived, into `out` (cleared).
  void dependencesOf(const Edge& edge, std::vector<Dependence>& out) const;
  size_t dependenceCount(const Edge& edge) const;
  const Task* find(uint64_t id) const;
  // Where the task is in tasks(), if the graph has it.
  std::optional<uint32_t> indexOf(uint64_t id) const;
  const std::vector<std::string>& functions() const { return functions_; }
  // Tasks per state, indexed by TaskState's value (dropped ones included).
  const std::array<uint64_t, 5>& countsByState() const { return by_state_; }
  // Run times of finished tasks, per function index.
  const std::vector<FunctionStats>& functionStats() const { return stats_; }
  // Names past FunctionNameLimits::kMaxNames: their tasks count under one
  // function of this name, and functionsNotKept() says how many times a
  // name was not kept.
  static constexpr std::string_view kOtherFunctions = "(functions past the first 65536)";
  uint64_t functionsNotKept() const { return functions_not_kept_; }
  // Events that named no task (id 0) and were dropped.
  uint64_t rejected() const { return rejected_; }
  // What the graph holds, from its containers' capacities (not counting
  // the allocator's own overhead).
  size_t approximateBytes() const;

 private:
  // Null past max_held_.
  Task* taskFor(uint64_t id);
  Task* newTask(uint64_t id);
  // taskFor, but null (and counted) for a task already dropped.
  Task* liveTaskFor(uint64_t id);
  bool droppedIfNotHeld(uint64_t id) const;
  void noteCreated(uint64_t id);
  void compact();
  // The held tasks that were among the dropped ones, now first.
  size_t compactTasks();
  void compactSlots();
  void compactEdges(size_t old_held);
  void renumber();
  void setOrdinal(uint64_t id, uint32_t ordinal);
  uint32_t intern(std::string_view function);
  uint32_t internSlow(std::string_view function);
  uint32_t addFunction(std::string_view function);
  void moveTo(Task& task, TaskState state);
  void addDependence(const GraphEvent& event);

  // Finding a pair: a successor's dependences mostly arrive together right
  // after its creation, so its pairs are usually the last few edges (a
  // "run") and a short scan finds them. A successor whose run grew long,
  // or whose run was interrupted and which then got more, goes into an
  // exact hash index of pairs instead; so does every pair once finding
  // interrupted runs has cost more than a pass over all edges, which keeps
  // hostile orders linear.
  enum PairsAt : uint8_t {
    kNoPairs = 0,
    kInRun,    // all its pairs are the current run, [run_begin_, end)
    kInOldRun, // all its pairs are one earlier run of at most kMaxRun edges
    kIndexed,  // all its pairs are in pair_slots_
  };
  static constexpr size_t kMaxRun = 8;
  uint32_t findPair(uint64_t from, Task& successor, uint64_t successor_id);
  uint32_t findIndexed(uint64_t from, uint64_t to) const;
  void index(uint32_t edge);
  void indexEverything();
  void sealRun();

  // Where a task is in tasks_, or kNone. The id tables hold ordinals:
  // position + task_base_, the ordinal of tasks_[0], so that popping the
  // front of tasks_ rewrites none of them.
  static constexpr uint32_t kNone = UINT32_MAX;
  uint32_t task_base_ = 0;
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
  // A slot's table starts at `base`: a compaction cuts off its dropped
  // past, moving the few old tasks still held (a tree's root) to index_.
  struct Slot {
    uint64_t base = 0;
    std::vector<uint32_t> positions;  // [serial - base] -> position
    // Serials below this one that are not held were dropped (0: none),
    // while `ordered`: the slot's tasks were created in serial order.
    uint64_t dropped_below = 0;
    uint64_t last_created = 0;
    bool ordered = true;
  };
  std::vector<Slot> dense_;
  // What an id costs hashed in index_ (an unordered_map node and its share
  // of the buckets), against 4 bytes for a table's entry.
  static constexpr size_t kHashedBytes = 40;
  // Entries of all slots' tables: within as many per task held as make a
  // table cost what hashing would, plus kTableEntriesSlack (remember()).
  size_t table_entries_ = 0;
  static constexpr size_t kTableEntriesPerTask = kHashedBytes / sizeof(uint32_t);
  static constexpr size_t kTableEntriesSlack = kMaxGap;
  std::unordered_map<uint64_t, uint32_t> index_;  // other ids -> position
  std::deque<Edge> edges_;
  // Dependences past a pair's first, each linked to the pair's one before.
  struct MoreDependence {
    uint64_t address = 0;
    uint32_t previous = kNoMore;
    uint8_t kind = 0;
  };
  std::deque<MoreDependence> more_;
  uint64_t dependences_ = 0;
  uint32_t run_successor_ = kNone;  // position of the task whose run is at the end
  size_t run_begin_ = 0;
  // Open addressing over edge indices (kNone: empty), a power of two long,
  // at most half full.
  std::vector<uint32_t> pair_slots_;
  size_t indexed_pairs_ = 0;
  bool index_everything_ = false;
  size_t scanned_ = 0;  // edges looked at to find interrupted runs
  std::vector<std::string> functions_;
  // Transparent, so a name is looked up as a string_view without a copy.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> function_index_;
  std::vector<FunctionStats> stats_;
  uint32_t last_index_ = 0;  // the function interned last
  uint32_t other_functions_ = 0;  // kOtherFunctions' index, once there is one
  uint64_t functions_not_kept_ = 0;
  std::array<uint64_t, 5> by_state_{};
  uint64_t rejected_ = 0;

  size_t max_tasks_ = 0;
  size_t max_held_ = 0;  // 0: no bound
  size_t heldBound() const { return max_held_ != 0 ? max_held_ : SIZE_MAX; }
  uint64_t tasks_not_held_ = 0;
  uint64_t dependences_not_held_ = 0;
  // Compact when tasks_ reaches this size (SIZE_MAX: never), once the
  // graph has made progress_floor_ progress (tasks ever + dependences).
  size_t next_compaction_ = SIZE_MAX;
  uint64_t progress_floor_ = 0;
  uint64_t tasks_dropped_ = 0, edges_dropped_ = 0, late_events_ = 0, generation_ = 0, compaction_reads_ = 0;
};

}  // namespace nk
