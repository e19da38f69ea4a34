#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "code_symbolizer.h"
#include "event_clock.h"
#include "message_pacer.h"
#include "task_capture.h"
#include "task_gate.h"

namespace nodekeeper::v1 {
class TaskEventBatch;
class TaskControl;
}

namespace nk::client {

// The one background thread that empties every thread's event ring and
// streams the events to nodekeeperd (TasksService.Publish), every few
// milliseconds. The app never waits for an absent daemon: while there is
// none (no socket, refused, killed) capture is off (TaskCapture::capturing:
// the event path records nothing), what the rings still hold is emptied
// unread, the events are counted as lost, and that is said once on stderr;
// capture resumes when a stream opens again. A slow one is no absent
// one: in lossless mode the app's threads (EventRing) and stop() wait while
// it takes writes, and give up only when it has taken none for the stall
// limit (NODEKEEPER_TASKS_STALL_S), which the exit line then counts.
//
// The same stream brings the daemon's debugging controls: a reader thread
// hands them to the gate the moment they arrive, and the gate's reports go
// back at once (wake()). When the stream breaks, the gate is released:
// a program never stays held by a daemon that is gone.
class TaskShipper {
 public:
  TaskShipper(TaskCapture& capture, TaskGate& gate, std::string socket_path, bool debug);
  ~TaskShipper();
  TaskShipper(const TaskShipper&) = delete;
  TaskShipper& operator=(const TaskShipper&) = delete;

  void start();
  // Ships what is left and closes the stream, within about `grace`; in
  // lossless mode, for as long as the daemon keeps taking writes, up to the
  // capture's stall limit without one.
  void stop(std::chrono::milliseconds grace);
  // Ship now (the gate has reports).
  void wake();
  // A task's function key as the graph names it ("fib (fib.c:31)", see
  // CodeSymbolizer; a registered function's own name); any thread.
  std::string describeFunction(uint64_t key) const;

  struct Link;

 private:
  void run();
  // `stopping`: everything recorded so far goes, open blocks included.
  bool shipOnce(bool stopping);
  std::chrono::milliseconds patience(std::chrono::milliseconds grace) const;
  void send(const nodekeeper::v1::TaskEventBatch& batch, uint64_t events, std::chrono::steady_clock::time_point now);
  // `events` will never reach a daemon; the first loss is said once.
  void lose(uint64_t events);
  std::string functionName(uint64_t code_address);
  void applyControl(const nodekeeper::v1::TaskControl& control);
  void readControls(Link& link);
  void closeStream(Link& link);
  void sendReports(std::chrono::steady_clock::time_point now);

  TaskCapture& capture_;
  TaskGate& gate_;
  std::string socket_path_;
  bool debug_;
  std::unique_ptr<Link> link_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool woken_ = false;
  bool exited_ = false;        // run() has returned
  std::chrono::nanoseconds cpu_used_{};  // what run() took of a core, for NK_DEBUG's exit line
  std::mutex context_mutex_;  // link_->context: made by run(), cancelled by stop()
  // Task names from the program's symbols and DWARF; its own lock (the
  // gate may ask from any thread, see describeFunction).
  mutable CodeSymbolizer symbolizer_;
  // Every key the threads have told (TaskCapture::takeToldFunctions), in
  // order, each once; the stream has been told the first `named_` (a new
  // stream is a new session, told them all again).
  std::vector<uint64_t> told_;
  std::unordered_set<uint64_t> told_set_;
  size_t named_ = 0;
  // Refits the app threads' tick-to-ns line (TaskCapture::clockFit).
  EventClock::Converter clock_;
  uint64_t shipped_ = 0, lost_ = 0;
  // Paced for the rate the stream's daemon named (0: none), from its first send.
  MessagePacer pacer_;
  std::optional<uint32_t> paced_rate_;
  std::chrono::steady_clock::duration longest_write_{};  // how slow the daemon got, for the exit line
  bool said_lost_ = false;
  // stop() cancelled a daemon that took no write for its patience: what is
  // lost from then on is lost to a stuck daemon, not to an absent one.
  std::atomic<bool> gave_up_{false};
};

}  // namespace nk::client
