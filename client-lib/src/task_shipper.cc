#include "task_shipper.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <span>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "client.h"
#include "connection_notifier.h"
#include "shipment_sizes.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "wire/compact_events.h"
#include "wire/publish_limits.h"

namespace v1 = nodekeeper::v1;

namespace nk::client {

namespace {

constexpr auto kInterval = std::chrono::milliseconds(5);
constexpr auto kRetry = std::chrono::seconds(1);
// How long a new stream's first message waits for the daemon to name its
// limits; one from before the limits names none, and gets the defaults.
constexpr auto kLimitsPatience = std::chrono::seconds(2);
constexpr size_t kDrainChunk = ShipmentSizes::kPartEvents;
static_assert(EventRing::kMaxBlockRecords <= wire::CompactEvents::kMaxRecordsPerPart, "a block is one compact part");
// A ring's chunks taken in one pass at the most, so that every ring is
// looked at in turn however fast one fills.
constexpr size_t kChunksPerPass = 4;

void say(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

}  // namespace

// The Publish stream and what it needs; rebuilt after a failure.
struct TaskShipper::Link {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::TasksService::Stub> stub;
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::TaskEventBatch, v1::TaskControl>> stream;
  std::thread reader;  // the daemon's controls, while `stream` is open
  // Set by the reader once the daemon's initial metadata names the split
  // form; until then parts go interleaved, which every daemon reads (one
  // from before the split form took split parts as empty).
  std::atomic<bool> daemon_reads_split{false};
  // The daemon's limits on this stream, as its metadata names them (0: not
  // named, so the defaults): ShipmentSizes and MessagePacer keep to them.
  std::atomic<uint32_t> daemon_max_message_bytes{0};
  std::atomic<uint32_t> daemon_messages_per_second{0};
  // Whether the daemon's initial metadata has come (with the limits, or
  // without: a daemon from before them), and when the stream opened.
  std::atomic<bool> daemon_spoke{false};
  std::chrono::steady_clock::time_point opened{};
  std::chrono::steady_clock::time_point next_attempt{};
  // Reused between sends: a cleared repeated field keeps its messages, so
  // steady shipping allocates nothing per event.
  v1::TaskEventBatch batch;
  v1::TaskEventBatch names;  // function names that did not fit with the events
};

TaskShipper::TaskShipper(TaskCapture& capture, TaskGate& gate, std::string socket_path, bool debug)
    : capture_(capture),
      gate_(gate),
      socket_path_(std::move(socket_path)),
      debug_(debug),
      link_(std::make_unique<Link>()),
      clock_(capture.clockFit().read()) {}

TaskShipper::~TaskShipper() { stop(std::chrono::milliseconds(500)); }

void TaskShipper::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

namespace {

std::string seconds(std::chrono::milliseconds span) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(span.count()) / 1000.0);
  return text;
}

}  // namespace

// Lossless: the app asked for every event, so a daemon that takes writes,
// however slowly, is waited for at exit as the producers wait for it while
// running; one that took none for the stall limit is not. Lossy: `grace`.
std::chrono::milliseconds TaskShipper::patience(std::chrono::milliseconds grace) const {
  if (capture_.mode() != EventRing::Mode::kLossless) return grace;
  return std::max(grace, capture_.stallLimit());
}

void TaskShipper::stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  {
    // A write the daemon does not take (it hangs) holds the shipper: after
    // the patience without a write taken, the stream is cancelled, which
    // ends the write.
    const auto limit = patience(grace);
    const auto poll = std::min<std::chrono::milliseconds>(grace, std::chrono::milliseconds(100));
    std::unique_lock lock(mutex_);
    uint64_t seen = capture_.deliveries();
    auto since = std::chrono::steady_clock::now();
    while (!wake_.wait_for(lock, poll, [&] { return exited_; })) {
      const auto now = std::chrono::steady_clock::now();
      if (capture_.mode() == EventRing::Mode::kLossless && capture_.deliveries() != seen) {
        seen = capture_.deliveries();
        since = now;
      } else if (now - since >= limit) {
        gave_up_.store(true);
        lock.unlock();
        std::lock_guard context_lock(context_mutex_);
        if (link_->context) link_->context->TryCancel();
        break;
      }
    }
  }
  thread_.join();
  grpc::Status ended;  // OK: the daemon read everything, or there was no stream
  if (link_->stream) {
    // A daemon that hangs must not hold the program at exit: Finish runs
    // on a helper thread and is cancelled after the patience. Until the
    // daemon has read the last writes (its status comes after them), they
    // may still be in the socket: cancelling earlier would lose them.
    auto done = std::make_shared<std::promise<grpc::Status>>();
    std::future<grpc::Status> finished = done->get_future();
    Link* link = link_.get();
    std::thread closer([link, done] {
      link->stream->WritesDone();
      // The daemon ends its side when it has read ours; then Finish.
      if (link->reader.joinable()) link->reader.join();
      done->set_value(link->stream->Finish());
    });
    if (finished.wait_for(patience(grace)) != std::future_status::ready) {
      gave_up_.store(true);
      link->context->TryCancel();
    }
    closer.join();
    ended = finished.get();
  }
  const uint64_t dropped = capture_.dropped();
  const bool lossy = capture_.mode() == EventRing::Mode::kLossy;
  // The count is news when some events got through (the daemon went away
  // mid-run), when the daemon stalled (lossless buffers dropped, or the
  // last writes were given up at exit) or the lossy buffers dropped some;
  // a daemon never reached was said at the time. Nothing at a normal exit.
  const uint64_t lost = lost_ + capture_.uncaptured();
  // The daemon's status comes after it has read every write: one that went
  // (killed, say) while the program exited may not have read the last ones,
  // which gRPC had taken and counted as sent. (A stream given up at exit is
  // said below as such.)
  std::string unread;
  if (!ended.ok() && !gave_up_.load() && shipped_ > 0)
    unread = "the stream to nodekeeperd ended as the program exited (" +
             (ended.error_message().empty() ? "gRPC code " + std::to_string(static_cast<int>(ended.error_code()))
                                            : ended.error_message()) +
             "): of the " + std::to_string(shipped_) + " events sent, the last may not have been recorded";
  // The time waited is no news on its own: on a busy node lossless waits as
  // it should (busy_client_test runs fib(29) under load silent).
  if ((lost > 0 && (shipped_ > 0 || gave_up_.load())) || dropped > 0 || debug_) {
    const std::string stalled = "nodekeeperd took none for " + seconds(capture_.stallLimit());
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(capture_.waited());
    say("nodekeeper: task events: " + std::to_string(shipped_) + " sent, " + std::to_string(lost) + " lost (" +
        (gave_up_.load() ? "nodekeeperd took none for " + seconds(patience(grace)) + " at exit" : "no daemon") + "), " +
        std::to_string(dropped) + " dropped (" + (lossy ? "lossy buffers full" : stalled) + "); longest write " +
        seconds(std::chrono::duration_cast<std::chrono::milliseconds>(longest_write_)) +
        (lossy ? "" : "; the program's threads waited " + seconds(waited) + " in all for room in their buffers" +
                          " (NODEKEEPER_TASKS=lossy never waits; NODEKEEPER_TASK_BUFFER sets the room)") +
        (unread.empty() ? "" : "; " + unread));
  } else if (!unread.empty()) {
    say("nodekeeper: task events: " + unread);
  }
  // What shipping cost besides the callbacks (gRPC's own threads not counted).
  if (debug_)
    say("nodekeeper: debug: the task shipper's thread used " +
        seconds(std::chrono::duration_cast<std::chrono::milliseconds>(cpu_used_)) + " of CPU");
}

void TaskShipper::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

std::string TaskShipper::describeFunction(uint64_t key) const {
  if (key == 0) return {};
  // The C API's and Ayudame's ids carry the registry's bit, which no code address has.
  if (TaskCapture::isFunctionId(key)) {
    std::string name;
    capture_.functionName(key, &name);
    return name;
  }
  // The gate asks from an app thread, and only while a debugger blocks
  // functions: a construct the shipper has named is a lookup; one it has
  // not named yet is named here, once, since the gate must decide before
  // the task can start.
  return symbolizer_.name(key);
}

// The shipper thread's: it names every task's function, each once.
std::string TaskShipper::functionName(uint64_t code_address) {
  if (code_address == 0 || TaskCapture::isFunctionId(code_address)) return describeFunction(code_address);
  return symbolizer_.name(code_address);
}

void TaskShipper::applyControl(const v1::TaskControl& control) {
  uint64_t id = control.control_id();
  switch (control.action_case()) {
    case v1::TaskControl::kHold: gate_.hold(id, control.hold()); break;
    case v1::TaskControl::kStep: gate_.step(id, control.step()); break;
    case v1::TaskControl::kBlock: {
      const auto& tasks = control.block().task_ids();
      gate_.block(id, std::span<const uint64_t>(tasks.data(), tasks.size()), control.block().blocked());
      break;
    }
    case v1::TaskControl::kBlockFunction: {
      const v1::FunctionBlock& b = control.block_function();
      gate_.blockFunction(id, b.function(), b.blocked(), std::span<const uint64_t>(b.task_ids().data(), b.task_ids().size()));
      break;
    }
    case v1::TaskControl::kPriority: gate_.priority(id, control.priority().task_id(), control.priority().level()); break;
    case v1::TaskControl::kPauseOn:
      gate_.pauseOn(id, static_cast<TaskGate::PauseEvent>(control.pause_on().event()), control.pause_on().enabled());
      break;
    case v1::TaskControl::kThreads:
      if (control.threads() == 0) {
        gate_.acknowledge(id, false, "threads: the number of threads must be at least 1");
      } else {
        Client::instance().requestThreadCount(control.threads());
        gate_.acknowledge(id, true, "threads " + std::to_string(control.threads()) +
                                        ": from the next parallel region after the current one");
      }
      break;
    case v1::TaskControl::kAllowTracer:
      // Yama's ptrace_scope 1 lets only an ancestor attach, unless the
      // process names its tracer: the daemon asks for the one gdb it vetted.
      if (prctl(PR_SET_PTRACER, static_cast<unsigned long>(control.allow_tracer()), 0, 0, 0) == 0)
        gate_.acknowledge(id, true, "pid " + std::to_string(control.allow_tracer()) + " may attach");
      else if (errno == EINVAL && !std::filesystem::exists("/proc/sys/kernel/yama"))
        gate_.acknowledge(id, true, "no Yama here: ptrace's own rules decide whether pid " +
                                        std::to_string(control.allow_tracer()) + " may attach");
      else
        gate_.acknowledge(id, false, std::string("prctl(PR_SET_PTRACER): ") + std::strerror(errno));
      break;
    case v1::TaskControl::kReleaseAll: gate_.releaseAll(id, "no debugger holds the program"); break;
    case v1::TaskControl::ACTION_NOT_SET: gate_.acknowledge(id, false, "a control with no action"); break;
  }
}

void TaskShipper::readControls(Link& link) {
  (void)pthread_setname_np(pthread_self(), "nk-task-control");
  // A current daemon sends its metadata as the stream opens; an older one
  // with its first control, or never (the interleaved form then goes on).
  link.stream->WaitForInitialMetadata();
  for (const auto& [key_ref, value_ref] : link.context->GetServerInitialMetadata()) {
    const std::string_view key(key_ref.data(), key_ref.size());
    const std::string_view value(value_ref.data(), value_ref.size());
    if (key == wire::CompactEvents::kFormsMetadataKey && wire::CompactEvents::namesSplit(value))
      link.daemon_reads_split.store(true, std::memory_order_relaxed);
    else if (key == wire::PublishLimits::kMaxMessageBytesKey)
      link.daemon_max_message_bytes.store(wire::PublishLimits::parseMessageBytes(value).value_or(0),
                                          std::memory_order_relaxed);
    else if (key == wire::PublishLimits::kMessagesPerSecondKey)
      link.daemon_messages_per_second.store(wire::PublishLimits::parseMessagesPerSecond(value).value_or(0),
                                            std::memory_order_relaxed);
  }
  link.daemon_spoke.store(true, std::memory_order_release);  // after the limits it named
  v1::TaskControl control;
  while (link.stream->Read(&control)) applyControl(control);
  if (gate_.active()) {
    gate_.releaseAll(0, "the stream to nodekeeperd ended");
    say("nodekeeper: lost nodekeeperd while debugging; held tasks are released and the program runs on");
  }
}

// After a failed write: the reader learns it too, and goes.
void TaskShipper::closeStream(Link& link) {
  {
    std::lock_guard context_lock(context_mutex_);
    if (link.context) link.context->TryCancel();
  }
  if (link.reader.joinable()) link.reader.join();
  link.stream.reset();
}

void TaskShipper::sendReports(std::chrono::steady_clock::time_point now) {
  std::vector<TaskGate::Report> reports = gate_.takeReports();
  if (reports.empty()) return;
  v1::TaskEventBatch& batch = link_->batch;
  batch.Clear();
  for (const TaskGate::Report& r : reports) {
    v1::GateReport* out = batch.add_gate_reports();
    out->set_control_id(r.control_id);
    out->set_ok(r.ok);
    out->set_message(r.message);
    out->set_held(r.held);
    out->set_parked_workers(r.parked_workers);
    out->set_steps_left(r.steps_left);
    out->set_timestamp_ns(static_cast<int64_t>(r.timestamp_ns));
    out->set_task_id(r.task);
    out->set_paused_on(static_cast<v1::PauseEvent>(r.paused_on));
  }
  send(batch, 0, now);
}

void TaskShipper::run() {
  // Named, so that `top -H` and perf tell the program's own threads from it.
  (void)pthread_setname_np(pthread_self(), "nk-shipper");
  // On a node the program fills, a wake-up of this thread at normal policy
  // preempts whatever runs on its core, as often as not a worker on the
  // program's critical path. SCHED_BATCH keeps the same share of the CPU but
  // never preempts on waking: the shipper runs when a thread yields or blocks
  // (OpenMP's idle workers yield all the time) or a time slice ends. The
  // threads it starts (the control reader, gRPC's) inherit it. The gain is
  // within this 2-core host's noise: UTS took 0.92 of the time at depth 42
  // (11 pairs), 0.99 at depth 44 (12 pairs).
  const sched_param batch{};
  (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &batch);
  std::unique_lock lock(mutex_);
  while (true) {
    bool stopping = stopping_;
    lock.unlock();
    bool more = shipOnce(stopping);
    lock.lock();
    if (stopping && !more) {
      timespec cpu{};
      if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        cpu_used_ = std::chrono::seconds(cpu.tv_sec) + std::chrono::nanoseconds(cpu.tv_nsec);
      exited_ = true;
      wake_.notify_all();
      return;
    }
    if (!more) wake_.wait_for(lock, kInterval, [&] { return stopping_ || woken_; });
    woken_ = false;
  }
}

// Empties the rings once; true when a ring had more than one chunk or was
// half full (go again at once).
bool TaskShipper::shipOnce(bool stopping) {
  Link& link = *link_;
  auto now = std::chrono::steady_clock::now();
  // Once a retry period, from the last look (not from the last pass: that
  // moved the next look on every pass, and a daemon started after the
  // program never got its events).
  const bool look = !link.stream && now >= link.next_attempt;
  if (look) link.next_attempt = now + kRetry;
  if (look && std::filesystem::exists(socket_path_)) {
    link.channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
    link.stub = v1::TasksService::NewStub(link.channel);
    {
      std::lock_guard context_lock(context_mutex_);  // stop() may cancel it
      link.context = std::make_unique<grpc::ClientContext>();
      // stop() gave up before it existed. Stopping alone is no reason: a
      // short program's first stream opens while it exits, and its events
      // are shipped like any others (cancelling it lost them all, and said
      // "not reaching" of a daemon that was there).
      if (gave_up_.load()) link.context->TryCancel();
    }
    link.daemon_reads_split.store(false, std::memory_order_relaxed);
    link.daemon_max_message_bytes.store(0, std::memory_order_relaxed);
    link.daemon_messages_per_second.store(0, std::memory_order_relaxed);
    link.daemon_spoke.store(false, std::memory_order_relaxed);
    paced_rate_.reset();
    link.opened = now;
    link.stream = link.stub->Publish(link.context.get());
    link.reader = std::thread([this, &link] { readControls(link); });
    capture_.setCapturing(true);
  }
  if (!link.stream) {
    // Nobody can steer a program without a daemon: it must not wait.
    if (gate_.active()) gate_.releaseAll(0, "no nodekeeperd at " + socket_path_);
    // Nor pay for events nobody takes.
    capture_.setCapturing(false);
  }

  // Nothing goes before the daemon names its limits: a first message sent at
  // the defaults ended the stream of a daemon that takes 4 KiB (it came
  // before the names when the daemon's gRPC was slow to start the stream).
  // The rings hold the events meanwhile. "More": the run loop comes back at
  // once, and does not end on a stop with events still to ship.
  if (link.stream && !link.daemon_spoke.load(std::memory_order_acquire) && now - link.opened < kLimitsPatience) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return true;
  }

  v1::TaskEventBatch& batch = link.batch;
  batch.Clear();
  uint64_t batched = 0;  // events in `batch`
  size_t batched_bytes = 0;
  const uint32_t daemon_limit = link.daemon_max_message_bytes.load(std::memory_order_relaxed);
  const ShipmentSizes sizes = ShipmentSizes::forLimit(daemon_limit != 0 ? std::optional(daemon_limit) : std::nullopt);
  // The functions first seen in the batch go with it, or ahead of it in
  // messages of their own when they do not fit: the daemon names a task
  // when it takes its creation.
  auto flush = [&] {
    if (batched == 0) return;
    // After the events: every key they name was told before them.
    for (uint64_t key : capture_.takeToldFunctions())
      if (told_set_.insert(key).second) told_.push_back(key);
    // The keys the stream has not been told: those after the last batch's,
    // or all of them on a new stream.
    const std::span<const uint64_t> untold = std::span(told_).subspan(std::min(named_, told_.size()));
    named_ = told_.size();
    v1::TaskEventBatch& names = link.names;
    names.Clear();
    size_t room = sizes.name_room + (sizes.message_cap - std::min(batched_bytes, sizes.message_cap));
    size_t names_bytes = 0;
    for (uint64_t key : untold) {
      std::string name = functionName(key);
      sizes.fitName(name);
      const size_t bytes = ShipmentSizes::nameBytes(name);
      v1::FunctionName* f = nullptr;
      if (bytes <= room) {
        room -= bytes;
        f = batch.add_functions();
      } else {
        if (names_bytes + bytes > sizes.names_message_bytes) {
          send(names, 0, now);
          names.Clear();
          names_bytes = 0;
        }
        names_bytes += bytes;
        f = names.add_functions();
      }
      f->set_key(key);
      f->set_name(std::move(name));
    }
    if (names.functions_size() > 0) send(names, 0, now);
    send(batch, batched, now);
    batch.Clear();
    batched = 0;
    batched_bytes = 0;
  };
  bool more = false;
  clock_.calibrate();
  capture_.clockFit().publish(clock_.fit());
  // A block the app's thread is still filling goes once it is some
  // milliseconds old (at the app's full pace blocks go whole); at the end,
  // or while a debugger watches, at once.
  const auto open = stopping || gate_.active() ? EventRing::OpenBlock::kTake : EventRing::OpenBlock::kTakeWhenOld;
  const auto threads = capture_.threads();
  for (const auto& thread : threads) {
    size_t n = 0;
    size_t take = kDrainChunk;
    for (size_t chunk = 0; chunk < kChunksPerPass; ++chunk) {
      take = link.stream ? sizes.part_events : kDrainChunk;
      if (!link.stream) {
        // Taken before capture stopped, or since the stream broke: emptied
        // without a look, so that no producer waits for room.
        n = thread->ring.discard();
        if (n != 0) lose(n);
        take = n + 1;  // all of it: no second chunk
      } else {
        // What could take the message past the daemon's limit goes in the
        // next one: `take` events in as many parts as blocks they span (the
        // rest of one begun, whole ones, the start of another).
        const size_t worst = ShipmentSizes::worstPartBytes(take) +
                             ShipmentSizes::kPartFraming * (take / thread->ring.blockRecords() + 2);
        if (batched_bytes + worst > sizes.message_cap) flush();
        // The parts are the ring's bytes as they lie (or a block's rest,
        // encoded afresh); their blocks are free again once this returns,
        // before anything slow (naming a function the first time reads its
        // binary's symbols; the send may wait on the daemon).
        const bool split = link.daemon_reads_split.load(std::memory_order_relaxed);
        n = thread->ring.consume(take, open, [&](const EventRing::Part& part) {
          v1::PackedEvents* packed = batch.add_packed();
          packed->set_thread(thread->slot);
          const std::string_view headers(reinterpret_cast<const char*>(part.headers.data()), part.headers.size());
          const std::string_view values(reinterpret_cast<const char*>(part.values.data()), part.values.size());
          batched_bytes += headers.size() + values.size() + ShipmentSizes::kPartFraming;
          if (split) {
            packed->set_compact_headers(headers.data(), headers.size());
            packed->set_compact_values(values.data(), values.size());
          } else {
            (void)wire::CompactEvents::interleave(wire::CompactEvents::Split::of(headers, values),
                                                  *packed->mutable_compact());  // the ring's own: it adds up
          }
        });
        batched += n;
        // Several chunks a message, of one thread or several: on a busy
        // node each message cost a wake-up or two on both sides (the
        // daemon's stream, this side's gRPC threads), on the app's cores.
        if (batched_bytes >= sizes.message_bytes) flush();
      }
      if (n < take) break;
    }
    // A ring half full or more may have a producer asleep for room (a
    // small NODEKEEPER_TASK_BUFFER): go again now, not after the interval.
    more = more || n == take || n * 2 >= thread->ring.capacity();
  }
  flush();
  if (!link.stream) {
    uint64_t uncaptured = 0;
    for (const auto& thread : threads) uncaptured += thread->uncaptured.load(std::memory_order_relaxed);
    if (uncaptured > 0) lose(0);  // says so, once
  }
  // After the events they follow, so the daemon's graph has those first.
  sendReports(now);
  return more;
}

void TaskShipper::send(const v1::TaskEventBatch& batch, uint64_t events, std::chrono::steady_clock::time_point now) {
  Link& link = *link_;
  if (link.stream) {
    // Within the daemon's rate, past which it ends the stream.
    const uint32_t rate = link.daemon_messages_per_second.load(std::memory_order_relaxed);
    if (paced_rate_ != rate) {
      pacer_.setRate(rate != 0 ? std::optional(rate) : std::nullopt);
      paced_rate_ = rate;
    }
    if (const auto wait = pacer_.take(std::chrono::steady_clock::now()); wait > wait.zero())
      std::this_thread::sleep_for(wait);
    const auto started = std::chrono::steady_clock::now();
    const bool written = link.stream->Write(batch);
    longest_write_ = std::max(longest_write_, std::chrono::steady_clock::now() - started);
    if (written) {
      shipped_ += events;
      capture_.delivered(events);
      return;
    }
  }
  if (link.stream) {
    closeStream(link);  // the daemon went away: try again later
    link.next_attempt = now + kRetry;
    capture_.setCapturing(false);
  }
  lose(events);
}

void TaskShipper::lose(uint64_t events) {
  // A new stream is a new session, which must be told the names again.
  named_ = 0;
  lost_ += events;
  // Given up at exit, the daemon is there but stuck: the exit line says so.
  if (!said_lost_ && !gave_up_.load()) {
    said_lost_ = true;
    // Once per process for an absent daemon, whichever part noticed first;
    // a daemon lost mid-run is news, and said here.
    if (shipped_ == 0 && ConnectionNotifier::processAbsenceSaid().exchange(true)) return;
    say("nodekeeper: task events are not reaching nodekeeperd (" + socket_path_ +
        "); the program runs on unchanged");
  }
}

}  // namespace nk::client
