#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/task_event_translator.h"
#include "taskgraph/task_graph.h"
#include "taskgraph/zstd_frames.h"
#include "tasks/idle_priority.h"

namespace nk {

// One session's live graph, built behind the recording rather than in step
// with it. The app's batches are recorded as they arrive, and queued here as
// where their frames are in the recording (read back from the page cache,
// so a graph far behind costs the daemon no memory), or, for a session not
// recorded, as the zstd frames themselves. The graph takes them later, in
// order, when something has time: the daemon's builder thread
// at the lowest priority, or anyone who looks at the graph (look() first
// takes every queued batch, so what a frontend sees is never behind what the
// daemon has received). On a node whose cores all run the app, building the
// graph as batches arrived cost the app as much CPU as its own tasks did;
// queued, the work waits for idle time or for a reader who wants it.
//
// Thread-safe: queue() takes only a short lock of the queue, so the stream
// that records never waits for a build in progress.
class SessionGraph {
 public:
  // `pending_total` counts the bytes queued in memory over all sessions
  // (the daemon bounds it); it must outlive this object. `max_tasks` is the
  // graph's window (TaskGraph); 0 keeps every task.
  // `idle`: the builder's thread, lifted by whoever waits for a lock it
  // holds (null: no such thread).
  explicit SessionGraph(std::atomic<uint64_t>& pending_total, size_t max_tasks = 0, IdlePriority* idle = nullptr);
  ~SessionGraph();
  SessionGraph(const SessionGraph&) = delete;
  SessionGraph& operator=(const SessionGraph&) = delete;

  // The recording whose frames queueRecorded() names; opened once (no
  // symlink followed) and kept open, so a recording removed while batches
  // wait is still read. False, with errno, when it cannot be opened.
  bool readFrom(const std::filesystem::path& recording);
  // One batch, already checked (TaskEventTranslator::check): the zstd frame
  // of its serialized TaskEventBatch, or where the recording holds that frame.
  void queue(std::vector<std::byte> frame);
  void queueRecorded(uint64_t offset, uint32_t size);
  // Bytes queued in memory.
  uint64_t pendingBytes() const;
  // Batches queued, in memory or recorded, or one partly taken.
  bool pending() const { return queuedBatches() > 0 || partly_taken_.load(std::memory_order_relaxed); }
  size_t queuedBatches() const { return queued_batches_.load(std::memory_order_relaxed); }

  // Takes up to `max_events` queued events into the graph, a slice of
  // kSliceEvents at a time under the graph's lock; how many it took.
  size_t build(size_t max_events);
  // The builder's thread has the lowest priority: a reader waits for the
  // graph's lock behind one slice of it at the most, whatever the node's
  // load, as the wait lifts the builder to the reader's priority.
  static constexpr size_t kSliceEvents = 4096;
  // Runs `look` on the graph with every batch queued so far taken.
  void look(const std::function<void(const TaskGraph&)>& look);

  struct Counts {
    uint64_t tasks = 0, edges = 0, events = 0;  // ever, those the window dropped included
    std::array<uint64_t, 5> by_state{};
    // Batches that passed their checks but could not be taken (a frame that
    // would not decompress or parse): an internal fault, counted and logged.
    uint64_t faults = 0;
    // Tasks created past the graph's bound (TaskGraph::maxHeld()), in the
    // recording only, and the bound.
    uint64_t tasks_not_held = 0;
    uint64_t max_held = 0;
    uint64_t dependences_not_held = 0;
    // Function names past FunctionNameLimits: keys the stream left unnamed,
    // and tasks counted under TaskGraph::kOtherFunctions.
    uint64_t names_not_kept = 0;
    uint64_t functions_not_kept = 0;
  };
  // What the graph holds now (without taking what is queued).
  Counts counts() const;
  // Frees the graph (an ended session's), keeping its counts; a batch
  // already begun is finished first, what is still queued is dropped. The
  // memory goes back to the allocator now.
  Counts release();

  // Memory the graph, the scratch of the batch being taken and the zstd
  // context hold (not what is queued: pendingBytes()).
  size_t heldBytes() const;

  // Why the last batch that could not be taken failed; empty if none did.
  std::string lastFault() const;

 private:
  // Under graph_mutex_: up to `budget` events of the batch being taken, or
  // of the next one; 0 when nothing is left.
  size_t step(size_t budget);
  // Under graph_mutex_: the next queued batch into events_; false if none.
  bool takeNext();
  // Under graph_mutex_.
  Counts countsNow() const;

  // A queued batch: its frame, or (frame empty) where the recording has it.
  struct Queued {
    std::vector<std::byte> frame;
    uint64_t offset = 0;
    uint32_t size = 0;
  };
  // The frame's bytes into frame_, or what went wrong.
  std::string load(Queued& queued);

  std::atomic<uint64_t>& pending_total_;
  IdlePriority* const idle_;
  mutable std::timed_mutex queue_mutex_;  // queue_ and queued_bytes_
  mutable std::atomic<bool> idle_holds_queue_{false};
  std::deque<Queued> queue_;
  uint64_t queued_bytes_ = 0;
  std::atomic<size_t> queued_batches_{0};  // queue_.size(), read without the lock
  int recording_fd_ = -1;

  mutable std::timed_mutex graph_mutex_;  // everything below
  mutable std::atomic<bool> idle_holds_graph_{false};
  TaskGraph graph_;
  TaskEventTranslator translator_;
  ZstdFrames zstd_;
  std::vector<std::byte> frame_, payload_;  // scratch, reused
  nodekeeper::v1::TaskEventBatch batch_;
  std::vector<GraphEvent> events_;
  size_t applied_ = 0;  // of events_
  std::atomic<bool> partly_taken_{false};  // applied_ < events_.size()
  uint64_t events_applied_ = 0;
  uint64_t faults_ = 0;
  std::string last_fault_;
  bool released_ = false;
  Counts released_counts_;
};

}  // namespace nk
