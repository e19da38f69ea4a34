#include "task_tool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "event_clock.h"

namespace nk::client {

namespace {

// The active tool, or null: set once at start, cleared at stop. The tool
// itself is never destroyed (leaked on purpose, like Client): runtime
// threads may still be in a callback while the process exits.
std::atomic<TaskTool*> g_active{nullptr};
TaskTool* g_created = nullptr;

// initial-exec TLS keeps the event path free of __tls_get_addr.
__attribute__((tls_model("initial-exec"))) thread_local TaskCapture::ThreadEvents* t_events = nullptr;
// libomp reports a task's dependences right after its creation, on the same
// thread, naming only the task: its parent is remembered here.
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_last_task = 0;
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_last_parent = 0;
// Its dependences are part of its creation: they share its timestamp.
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_last_created = 0;

// Ticks, not nanoseconds: the shipper converts them.
uint64_t nowNs() { return EventClock::ticks(); }

bool implicit(uint64_t id) { return (id & TaskCapture::kImplicitBit) != 0; }

}  // namespace

// The one check a task pays for debugging when no debugger acts. The bench
// builds a library without it (NK_BENCH_WITHOUT_TASK_GATE) to measure what
// it costs, side by side.
#ifdef NK_BENCH_WITHOUT_TASK_GATE
#define gateActive() false
#else
#define gateActive() gate_.active()
#endif

namespace {

}  // namespace

TaskTool* TaskTool::instance() { return g_active.load(std::memory_order_acquire); }

// Called under Client's lock: by the OMPT tool's initialisation, and by the
// first call of the C API or AYU_event; the first one that is on wins.
void TaskTool::start(const ClientOptions& options) {
  if (options.task_events == TaskEventMode::kOff || g_created) return;
  EventClock::init(options.task_clock_counter);  // before the first event
  g_created = std::make_unique<TaskTool>(Key{}, options).release();
  if (options.break_at_start) g_created->gate_.hold(0, true);
  g_created->shipper_.start();
  g_active.store(g_created, std::memory_order_release);
}

// From here on callbacks record nothing: nobody would empty the rings, and
// a lossless one would hold its thread forever.
void TaskTool::stop() {
  TaskTool* tool = g_active.exchange(nullptr, std::memory_order_acq_rel);
  if (tool) tool->shipper_.stop(std::chrono::milliseconds(1000));
}

namespace {

// On the app thread that found its buffer stuck, once per process: the
// exit line gives the final counts.
void sayStalled(const TaskCapture& capture) {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  char line[256];
  int length = std::snprintf(line, sizeof line,
                             "nodekeeper: nodekeeperd has taken no task events for %g s (%llu taken so far); "
                             "dropping them (counted) until it takes some again; the program runs on\n",
                             static_cast<double>(capture.stallLimit().count()) / 1000.0,
                             static_cast<unsigned long long>(capture.deliveredEvents()));
  ssize_t ignored = ::write(STDERR_FILENO, line, static_cast<size_t>(std::clamp(length, 0, int{sizeof line} - 1)));
  (void)ignored;
}

// The CPUs this process may run on (its affinity mask): how many of its
// threads can fill their buffers at once.
unsigned allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

TaskTool::TaskTool(Key, const ClientOptions& options)
    : capture_([options, cpus = allowedCpus()](size_t threads_before) {
                 return options.taskBufferEvents(cpus, threads_before);
               },
               options.task_events == TaskEventMode::kLossy ? EventRing::Mode::kLossy : EventRing::Mode::kLossless,
               EventRing::StallPolicy{.limit = options.task_stall_limit,
                                      .on_stall = [this] { sayStalled(capture_); },
                                      .on_full = [this] { shipper_.wake(); }}),
      gate_([this] { shipper_.wake(); }, [this](uint64_t key) { return shipper_.describeFunction(key); }),
      shipper_(capture_, gate_, options.socket_path, options.debug) {}

// Every callback starts here: inlined into each, the first call's work
// kept out of line.
__attribute__((always_inline)) inline TaskCapture::ThreadEvents& TaskTool::thread() {
  if (t_events) [[likely]]
    return *t_events;
  return attachThisThread();
}

__attribute__((noinline)) TaskCapture::ThreadEvents& TaskTool::attachThisThread() {
  t_events = capture_.attachThread().get();  // kept alive by capture_
  return *t_events;
}

void TaskTool::implicitTaskBegin(uint64_t* task) {
  if (*task == 0) *task = TaskCapture::newId(thread(), true);
}

void TaskTool::implicitTaskEnd(uint64_t task) {
  if (task != 0) TaskCapture::parentDone(thread(), task);
}

void TaskTool::taskCreated(uint64_t* parent_data, uint64_t* task, uint64_t code_address) {
  TaskCapture::ThreadEvents& t = thread();
  uint64_t parent = idOf(*parent_data);
  if (parent == 0) parent = TaskCapture::newId(t, true);  // e.g. the initial task, seen first here
  *parent_data = parent | kCreatedChildrenBit;
  if (capture_.capturing()) [[likely]] {
    uint64_t now = nowNs();
    *task = capture_.created(t, parent, code_address, 0, now);
    t_last_task = *task;
    t_last_parent = parent;
    t_last_created = now;
  } else {
    // No daemon: an id all the same (the task's other callbacks carry it),
    // and its dependences are not tracked (t_last_task).
    *task = TaskCapture::newId(t, false);
    t_last_task = 0;
    TaskCapture::uncaptured(t, 1);
  }
  if (gateActive()) [[unlikely]]
    gate_.created(*task, code_address);
}

void TaskTool::dependences(uint64_t task, std::span<const Dependence> deps) {
  if (task == 0 || task != t_last_task) return;  // not one this thread just created
  capture_.dependences(thread(), t_last_parent, task, deps, t_last_created);
}

void TaskTool::taskSwitched(uint64_t prior, bool prior_done, bool prior_cancelled, uint64_t next) {
  TaskCapture::ThreadEvents& t = thread();
  const bool finishes = prior != 0 && !implicit(prior) && prior_done;
  const bool starts = next != 0 && !implicit(next);
  const bool capturing = capture_.capturing();
  if (!capturing) [[unlikely]]
    TaskCapture::uncaptured(t, uint64_t{finishes} + uint64_t{starts});
  // One reading for both events: the switch is one moment.
  uint64_t now = capturing && (finishes || starts) ? nowNs() : 0;
  if (finishes && starts && capturing && !gateActive()) [[likely]] {
    // One record: in a recursive tree nearly every task's end resumes its
    // parent. (With a gate the start may wait for the debugger, so it gets
    // a record and a time of its own.)
    capture_.finishedThenStarted(t, prior, prior_cancelled, next, t.slot, now);
    return;
  }
  if (finishes) {
    if (capturing) capture_.finished(t, prior, prior_cancelled, now);
    if (gateActive()) [[unlikely]]
      gate_.finished(prior);
  }
  if (starts) {
    // Before the body runs: a task the debugger holds keeps this worker
    // here (OpenMP has no way to run another instead).
    if (gateActive()) [[unlikely]] {
      gate_.admit(next);
      if (capturing) now = nowNs();
    }
    if (capturing) capture_.started(t, next, t.slot, now);
  }
}

void TaskTool::sync(uint64_t* task_data, uint64_t kind, bool end) {
  TaskCapture::ThreadEvents& t = thread();
  const uint64_t task = task_data ? idOf(*task_data) : 0;
  const bool waits = kind != 1 || !task_data || (*task_data & kCreatedChildrenBit) != 0;
  // The end clears the bit: the next taskwait waits only for what the task
  // creates after this one.
  if (kind == 1 && end && task_data) *task_data = task;
  if (waits) {
    if (capture_.capturing()) [[likely]]
      capture_.sync(t, implicit(task) ? 0 : task, kind, end, nowNs());
    else
      TaskCapture::uncaptured(t, 1);
  }
  if (!end && gateActive()) [[unlikely]]
    gate_.sync(implicit(task) ? 0 : task, kind == 1 ? TaskGate::PauseEvent::kTaskwait : TaskGate::PauseEvent::kBarrier);
}

void TaskTool::runtimeTaskCreated(uint64_t task, uint64_t parent, uint64_t function, int32_t priority) {
  capture_.createdWithId(thread(), task, parent, function, priority, nowNs());
  if (gateActive()) [[unlikely]]
    gate_.created(task, function);
}

void TaskTool::runtimeEdge(uint64_t from, uint64_t to, uint64_t address, DependenceKind kind) {
  capture_.edge(thread(), from, to, address, kind, nowNs());
}

void TaskTool::runtimeTaskQueued(uint64_t task) { capture_.queued(thread(), task, nowNs()); }

// A runtime that did not ask (or started the task anyway) waits here, as
// an OpenMP worker would.
void TaskTool::runtimeTaskStarted(uint64_t task, uint32_t worker) {
  if (gateActive()) [[unlikely]]
    gate_.admit(task);
  capture_.started(thread(), task, worker, nowNs());
}

void TaskTool::runtimeTaskEnded(uint64_t task, bool failed) {
  capture_.finished(thread(), task, failed, nowNs());
  if (gateActive()) [[unlikely]]
    gate_.finished(task);
}

int TaskTool::ayudameEvent(int event, int64_t task, const void* data) {
  return ayudame_.event(thread(), event, task, data, nowNs());
}

}  // namespace nk::client
