#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "taskgraph/export_window.h"
#include "taskgraph/task_graph.h"
#include "taskgraph/task_run_sink.h"

namespace nk {

// Turns a session's event stream (GraphEvents, batch by batch, as a
// recording or a Watch stream gives them) into task runs for a trace
// writer, holding only the tasks that are open: created or running, not
// finished. A finished task is forgotten, so memory follows the program's
// live tasks, not its length.
//
// - A run begins at the task's first start (a resume after a taskyield is
//   the same run) and ends at its finish, on the thread that started it.
//   Per thread, runs must nest (a task runs inside its parent's taskwait);
//   when a run finishes while runs it encloses are still open (lossy data),
//   those end with it, marked cut, and their own finish is ignored later.
//   Times never go backwards per thread (a stamp earlier than the thread's
//   last is raised to it), so writers get ordered events.
// - Runs still open when the stream ends close at its last timestamp,
//   marked unfinished. Tasks that never start have no run.
// - The window keeps the runs that overlap it: a run that started before
//   `from` is held back (not written) until its thread's time reaches
//   `from`, then written with its real start; runs starting after `to` are
//   left out.
// - Batches are per app thread, so a task's start (on the worker that ran
//   it) can arrive before its creation (in its creator's batch): that
//   worker's events wait until the creation arrives (and the rest of its
//   batch, which holds the task's dependences), bounded by kMaxHeld.
// - Dependences into a task, recorded before it starts, go with its begin
//   (OTF2 writes them); later ones are dropped.
// - Flows (Perfetto's arrows): for a dependence whose predecessor is still
//   open when it arrives (the usual case: OpenMP reports a dependence only
//   on a predecessor that has not completed), the predecessor's end carries
//   a flow id and the successor's begin ends it. A dependence on a task
//   already finished has no arrow: that would need every finished task
//   kept. Several dependences of one pair make one arrow.
class TaskRunTracker {
 public:
  struct Counts {
    uint64_t tasks = 0;          // creation events
    uint64_t dependences = 0;    // dependence events
    uint64_t runs = 0;           // begins written
    uint64_t flows = 0;          // flow arrows begun
    uint64_t peak_open = 0;      // most open tasks held at once
  };

  TaskRunTracker(TaskRunSink& sink, ExportWindow window = {});

  // One batch's events (a frame of a recording, a Watch message).
  void apply(std::span<const GraphEvent> events);
  // Closes what is still open, at the last timestamp seen.
  void finish();

  const Counts& counts() const { return counts_; }
  // No event seen yet.
  bool empty() const { return !started_; }
  int64_t lastNs() const { return last_ns_; }

 private:
  struct Open {
    uint64_t parent = 0;
    uint32_t function = 0;
    int32_t thread = -1;
    int64_t start_ns = 0;
    bool created = false, started = false, written = false;
    bool held = false;  // its start (and maybe finish) wait in its thread's held events
    std::vector<TaskRunSink::Dependence> dependences;  // until it starts
    std::vector<uint64_t> successors;                  // flows out, until it ends
    std::vector<uint64_t> flows_in;                    // begun flows, until it starts
  };
  struct Thread {
    std::vector<uint64_t> stack;  // open runs, innermost last
    bool crossed = false;         // its time has reached the window's start
    int64_t last_ns = std::numeric_limits<int64_t>::min();
    // From a start whose task's creation has not arrived yet (another
    // thread's batch, shipped later), this thread's starts and finishes
    // wait, in order, so that the run is written with its name and parent.
    std::deque<GraphEvent> held;
  };
  // A creation that never comes (lossy data) must not hold a thread
  // forever: past this many events it goes on without the name.
  static constexpr size_t kMaxHeld = 1 << 16;

  void apply(const GraphEvent& e);
  // `released`: the event comes out of its thread's held events.
  void start(const GraphEvent& e, bool released = false);
  void finishTask(const GraphEvent& e, bool released = false);
  void depend(const GraphEvent& e);
  uint32_t intern(std::string_view function);
  Open& openTask(uint64_t id);
  void cross(Thread& thread, int64_t ns);
  // Runs the thread's held events (all of them when `force`, else up to
  // the next start of a task not yet created).
  void release(int32_t thread_id, bool force);
  // After a batch with creations: the held events that may go now, across
  // threads in time order, so that a predecessor's end comes before its
  // successor's begin and the arrow between them is kept.
  void releaseReady();
  bool releasable(const GraphEvent& e) const;
  void writeBegin(uint64_t id, Open& task);
  void writeEnd(uint64_t id, Open& task, TaskRunSink::End end);
  TaskRunSink::Run runOf(uint64_t id, const Open& task) const;

  TaskRunSink& sink_;
  ExportWindow window_;
  bool started_ = false;
  int64_t from_ns_ = std::numeric_limits<int64_t>::min(), to_ns_ = std::numeric_limits<int64_t>::max();
  int64_t last_ns_ = 0;
  std::unordered_map<uint64_t, Open> open_;
  std::map<int32_t, Thread> threads_;  // few threads
  std::unordered_map<std::string, uint32_t> functions_;
  std::string last_function_;
  uint32_t last_index_ = 0;
  uint64_t next_flow_ = 0;
  bool created_in_batch_ = false;
  std::vector<uint64_t> flows_out_;  // scratch
  Counts counts_;
};

}  // namespace nk
