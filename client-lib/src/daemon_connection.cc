#include "daemon_connection.h"

#include <pthread.h>

#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backoff.h"
#include "connection_notifier.h"
#include "nodekeeper/v1/apps.grpc.pb.h"
#include "pending_changes.h"
#include "thread_affinity_keeper.h"
#include "thread_count_applier.h"

namespace nk::client {

namespace v1 = nodekeeper::v1;

using ControlStream = grpc::ClientReaderWriter<v1::AppReport, v1::AppDecision>;

namespace {

// The CPUs a thread of this process may run on (tid 0: the caller).
std::optional<ThreadAffinityKeeper::CpuList> cpuMaskOf(int tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(tid, sizeof(set), &set) != 0) return std::nullopt;
  ThreadAffinityKeeper::CpuList cpus;
  for (uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

bool isSocket(const std::string& path) {
  struct stat path_stat{};
  return ::stat(path.c_str(), &path_stat) == 0 && S_ISSOCK(path_stat.st_mode);
}

// Nobody listens: the socket file is gone, or left behind by a daemon that
// died (kill -9). A busy daemon still accepts (or says EAGAIN).
bool nobodyListens(const std::string& path) {
  if (!isSocket(path)) return true;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  int error = errno;
  ::close(fd);
  return rc != 0 && (error == ECONNREFUSED || error == ENOENT);
}

// A daemon that is gone or said no is said at once; one that did not answer
// in time (deadline, a stream cut under load) may only be busy.
ConnectionNotifier::Failure classify(const grpc::Status& status, const std::string& socket_path) {
  switch (status.error_code()) {
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
      return nobodyListens(socket_path) ? ConnectionNotifier::Failure::kDefinite
                                        : ConnectionNotifier::Failure::kNoAnswerYet;
    default: return ConnectionNotifier::Failure::kDefinite;
  }
}

bool setCpuMask(int tid, const ThreadAffinityKeeper::CpuList& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (uint32_t cpu : cpus)
    if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  return ::sched_setaffinity(tid, sizeof(set), &set) == 0;
}

}  // namespace

// Shared between the owner and the background thread, so a thread left
// detached by a bounded stop() never touches freed memory.
struct DaemonConnection::State {
  State(DaemonConnectionOptions o, ThreadCountApplier& a)
      : options(std::move(o)),
        applier(a),
        notifier(options.socket_path, &ConnectionNotifier::processAbsenceSaid()),
        pending(options.power_budget_mw) {}

  DaemonConnectionOptions options;
  ThreadCountApplier& applier;
  ConnectionNotifier notifier;
  ThreadAffinityKeeper affinity;

  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool done = false;
  PendingChanges pending;                          // guarded by mutex
  grpc::ClientContext* control_context = nullptr;  // to cancel the stream on stop
  grpc::ClientContext* call_context = nullptr;     // a registered app's call, likewise

  std::atomic<uint32_t> team_size{0};
  std::atomic<bool> managed{false};
  // Given back since the last registration, said with the "lost" line.
  uint32_t given_team_size = 0;
  size_t given_threads = 0;

  void run();
  bool session(Backoff& backoff);
  bool stoppingNow();
  std::optional<uint64_t> registerApp(v1::AppsService::Stub& stub);
  void unregister(v1::AppsService::Stub& stub, uint64_t app_id);
  grpc::Status sendPending(v1::AppsService::Stub& stub, uint64_t app_id, bool all);
  grpc::Status sendThreadChanges(v1::AppsService::Stub& stub, uint64_t app_id,
                         const std::vector<PendingChanges::ThreadChange>& changes);
  void sendPowerBudget(v1::AppsService::Stub& stub, uint64_t app_id, uint64_t mw);
  bool runControlStream(v1::AppsService::Stub& stub, uint64_t app_id);
  // Lets stop() cancel the stream or call about to open, through `slot`
  // (control_context or call_context): false, and nothing to open, when
  // stop() came first.
  bool openCancellable(grpc::ClientContext& context, grpc::ClientContext*& slot);
  void closeCall();
  void readDecisions(ControlStream& stream, std::atomic<bool>& broken);
  bool reportUntilBroken(ControlStream& stream, v1::AppsService::Stub& stub, uint64_t app_id,
                         const std::atomic<bool>& broken);
  grpc::Status closeControl(grpc::ClientContext& context, std::thread& reader, ControlStream& stream);
  void lost(const std::string& reason, const grpc::Status& status);
  void failed(const std::string& reason, ConnectionNotifier::Failure kind);
  void say(const std::optional<std::string>& line);
  void debug(const std::string& line);
  std::chrono::system_clock::time_point deadline() const {
    return std::chrono::system_clock::now() + options.rpc_deadline;
  }
  std::chrono::system_clock::time_point sessionDeadline() const {
    return std::chrono::system_clock::now() + options.session_rpc_deadline;
  }
};

DaemonConnection::DaemonConnection(DaemonConnectionOptions options, ThreadCountApplier& applier)
    : state_(std::make_shared<State>(std::move(options), applier)) {}

DaemonConnection::~DaemonConnection() { stop(std::chrono::milliseconds(1000)); }

void DaemonConnection::start() {
  if (auto mask = cpuMaskOf(0)) state_->affinity.setProcessMask(std::move(*mask));
  std::thread([state = state_] {
    (void)pthread_setname_np(pthread_self(), "nk-daemon-link");
    state->run();
    std::lock_guard lock(state->mutex);
    state->done = true;
    state->wake.notify_all();
  }).detach();
}

// Asks the thread to unregister and leave; waits at most `grace` (what it
// may be waiting on is cancelled, and UnregisterApp has a short deadline, so
// this only expires if gRPC misbehaves).
void DaemonConnection::stop(std::chrono::milliseconds grace) {
  std::unique_lock lock(state_->mutex);
  if (!state_->stopping) {
    state_->stopping = true;
    if (state_->control_context) state_->control_context->TryCancel();
    if (state_->call_context) state_->call_context->TryCancel();
    state_->wake.notify_all();
  }
  state_->wake.wait_for(lock, grace, [&] { return state_->done; });
}

void DaemonConnection::threadBegan(int tid) {
  if (auto mask = cpuMaskOf(tid)) state_->affinity.threadBegan(tid, std::move(*mask));
  std::lock_guard lock(state_->mutex);
  state_->pending.threadBegan(tid);
}

void DaemonConnection::threadEnded(int tid) {
  state_->affinity.threadEnded(tid);
  std::lock_guard lock(state_->mutex);
  state_->pending.threadEnded(tid);
}

void DaemonConnection::setPowerBudget(uint64_t mw) {
  std::lock_guard lock(state_->mutex);
  state_->pending.setPowerBudget(mw);
  state_->wake.notify_all();
}

void DaemonConnection::reportTeamSize(uint32_t size) { state_->team_size.store(size, std::memory_order_relaxed); }

bool DaemonConnection::managed() const { return state_->managed.load(std::memory_order_relaxed); }

// The daemon went away while it managed the program: say so, and give the
// program back what the daemon had changed, so it never runs worse off for
// the daemon's absence (the daemon cannot undo its pins once it is dead).
// The session ended under the daemon's feet, which ends the app's
// registration too: the program gets back at once what the daemon had changed,
// whether or not the break is worth a line.
void DaemonConnection::State::lost(const std::string& reason, const grpc::Status& status) {
  managed = false;
  uint32_t team_size = applier.giveBackOwnTeamSize();
  if (team_size != 0 && team_size != applier.applied()) given_team_size = team_size;
  given_threads += affinity.giveBack(cpuMaskOf, setCpuMask);
  failed(reason, classify(status, options.socket_path));
}

void DaemonConnection::State::failed(const std::string& reason, ConnectionNotifier::Failure kind) {
  std::optional<std::string> line = notifier.failed(reason, kind);
  if (!line) return;
  say(line);
  say(ConnectionNotifier::gaveBack(std::exchange(given_team_size, 0), std::exchange(given_threads, 0)));
}

void DaemonConnection::State::say(const std::optional<std::string>& line) {
  if (!line) return;
  std::string text = *line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

void DaemonConnection::State::debug(const std::string& line) {
  if (options.debug) say("nodekeeper: debug: " + line);
}

static std::string describe(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNIMPLEMENTED: return "apps API not implemented by the daemon";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "no answer in time";
    case grpc::StatusCode::UNAVAILABLE: return "unavailable";
    default: break;
  }
  std::string text = "gRPC code " + std::to_string(static_cast<int>(status.error_code()));
  if (!status.error_message().empty()) text += ": " + status.error_message();
  return text;
}

// At least one attempt, even when stop() came first, so a short program
// still learns (and says) whether it was managed.
void DaemonConnection::State::run() {
  Backoff backoff(std::chrono::milliseconds(100), std::chrono::milliseconds(5000));
  for (;;) {
    bool stop_now = session(backoff);
    std::unique_lock lock(mutex);
    if (stop_now || stopping) return;
    wake.wait_for(lock, backoff.next(), [&] { return stopping; });
    if (stopping) return;
  }
}

// One connection: RegisterApp, the threads so far, then the Control stream
// until it breaks. Returns true when the app is stopping.
bool DaemonConnection::State::session(Backoff& backoff) {
  // No socket, no daemon: say so without building a gRPC channel, whose
  // threads would compete with the app's for CPUs at every retry.
  if (!isSocket(options.socket_path)) {
    failed("no socket", ConnectionNotifier::Failure::kDefinite);
    debug("no socket at " + options.socket_path);
    return stoppingNow();
  }
  auto channel = grpc::CreateChannel("unix:" + options.socket_path, grpc::InsecureChannelCredentials());
  auto stub = v1::AppsService::NewStub(channel);

  const std::optional<uint64_t> app_id = registerApp(*stub);
  if (!app_id) return stoppingNow();
  managed = true;
  backoff.reset();
  given_team_size = 0;
  given_threads = 0;
  say(notifier.connected());
  debug("registered as app " + std::to_string(*app_id));

  if (grpc::Status status = sendPending(*stub, *app_id, true); !status.ok()) {
    unregister(*stub, *app_id);  // else the next RegisterApp finds it registered already
    if (stoppingNow()) return true;  // cancelled by stop(): no failure
    lost("thread registration failed: " + describe(status), status);
    return false;
  }
  return runControlStream(*stub, *app_id);
}

bool DaemonConnection::State::stoppingNow() {
  std::lock_guard lock(mutex);
  return stopping;
}

// The daemon's id for the app, or nothing after saying why not.
std::optional<uint64_t> DaemonConnection::State::registerApp(v1::AppsService::Stub& stub) {
  v1::RegisterAppRequest request;
  request.set_name(options.app_name);
  request.set_max_threads(options.max_threads);
  request.set_tracing_only(options.tracing_only);
  {
    std::lock_guard lock(mutex);
    request.set_power_budget_mw(pending.takeBudgetForRegistration());
  }
  v1::App app;
  grpc::ClientContext context;
  context.set_deadline(deadline());
  affinity.pinsPossibleFromNow();
  grpc::Status status = stub.RegisterApp(&context, request, &app);
  if (!status.ok()) {
    failed(describe(status), classify(status, options.socket_path));
    debug("RegisterApp failed: " + describe(status));
    return std::nullopt;
  }
  return app.app_id();
}

void DaemonConnection::State::unregister(v1::AppsService::Stub& stub, uint64_t app_id) {
  v1::UnregisterAppRequest request;
  request.set_app_id(app_id);
  v1::UnregisterAppResponse response;
  grpc::ClientContext context;
  context.set_deadline(deadline());
  (void)stub.UnregisterApp(&context, request, &response);
  managed = false;
}

// What the daemon has not heard yet (`all`: every live thread, for a new
// registration). Returns how a refused or unanswered thread change failed;
// a refused budget is only said, since the app runs on either way.
grpc::Status DaemonConnection::State::sendPending(v1::AppsService::Stub& stub, uint64_t app_id, bool all) {
  PendingChanges::Batch batch;
  {
    std::lock_guard lock(mutex);
    batch = all ? pending.takeAll() : pending.takeNew();
  }
  if (grpc::Status status = sendThreadChanges(stub, app_id, batch.threads); !status.ok()) return status;
  if (batch.power_budget_mw) sendPowerBudget(stub, app_id, *batch.power_budget_mw);
  return grpc::Status::OK;
}

grpc::Status DaemonConnection::State::sendThreadChanges(v1::AppsService::Stub& stub, uint64_t app_id,
                                                const std::vector<PendingChanges::ThreadChange>& changes) {
  for (const PendingChanges::ThreadChange& change : changes) {
    v1::RegisterThreadRequest request;
    request.set_app_id(app_id);
    request.set_tid(change.tid);
    request.set_end(change.ended);
    v1::RegisterThreadResponse response;
    grpc::ClientContext context;
    context.set_deadline(sessionDeadline());
    if (!openCancellable(context, call_context))
      return grpc::Status(grpc::StatusCode::CANCELLED, "the program is ending");
    grpc::Status status = stub.RegisterThread(&context, request, &response);
    closeCall();
    if (!status.ok()) return status;
    debug(std::string(change.ended ? "thread ended " : "thread registered ") + std::to_string(change.tid));
  }
  return grpc::Status::OK;
}

void DaemonConnection::State::sendPowerBudget(v1::AppsService::Stub& stub, uint64_t app_id, uint64_t mw) {
  v1::SetPowerBudgetRequest request;
  request.set_app_id(app_id);
  request.set_power_budget_mw(mw);
  v1::App response;
  grpc::ClientContext context;
  context.set_deadline(sessionDeadline());
  if (!openCancellable(context, call_context)) return;
  grpc::Status status = stub.SetPowerBudget(&context, request, &response);
  closeCall();
  if (!status.ok() && !stoppingNow())
    say("nodekeeper: power budget of " + std::to_string(mw) + " mW refused (" + describe(status) + ")");
}

// Reports out and thread-count decisions in, until the stream breaks or the
// app stops. Returns true when the app is stopping.
bool DaemonConnection::State::runControlStream(v1::AppsService::Stub& stub, uint64_t app_id) {
  grpc::ClientContext context;
  // stop() came first. The lock is not held while unregistering, so the
  // app's calls never wait on the daemon.
  if (!openCancellable(context, control_context)) {
    unregister(stub, app_id);
    return true;
  }
  auto stream = stub.Control(&context);
  std::atomic<bool> broken{false};
  std::thread reader([&] { readDecisions(*stream, broken); });
  const bool stop_now = reportUntilBroken(*stream, stub, app_id, broken);
  grpc::Status status = closeControl(context, reader, *stream);
  if (stop_now) {
    unregister(stub, app_id);
    return true;
  }
  lost("control stream closed: " + describe(status), status);
  return stoppingNow();
}

bool DaemonConnection::State::openCancellable(grpc::ClientContext& context, grpc::ClientContext*& slot) {
  std::lock_guard lock(mutex);
  if (stopping) return false;
  slot = &context;
  return true;
}

void DaemonConnection::State::closeCall() {
  std::lock_guard lock(mutex);
  call_context = nullptr;
}

// The reader thread: applies each decision, then wakes the reporter when
// the stream breaks.
void DaemonConnection::State::readDecisions(ControlStream& stream, std::atomic<bool>& broken) {
  v1::AppDecision decision;
  while (stream.Read(&decision)) {
    for (const v1::AppThread& thread : decision.threads())
      affinity.daemonPinned(thread.tid(), {thread.affinity().cpus().begin(), thread.affinity().cpus().end()});
    applier.setDecision(decision.thread_count());
    debug("decision D=" + std::to_string(decision.thread_count()));
  }
  broken = true;
  std::lock_guard lock(mutex);
  wake.notify_all();
}

// Reports the team size and sends what changed every report interval, at
// once when the budget changes. Returns true when the app is stopping,
// false when the stream or the daemon failed.
bool DaemonConnection::State::reportUntilBroken(ControlStream& stream, v1::AppsService::Stub& stub, uint64_t app_id,
                                                const std::atomic<bool>& broken) {
  for (;;) {
    v1::AppReport report;
    report.set_app_id(app_id);
    report.set_team_size(team_size.load(std::memory_order_relaxed));
    const bool ok = stream.Write(report) && sendPending(stub, app_id, false).ok();
    std::unique_lock lock(mutex);
    // stop() cancels the stream itself: that is the app ending, not the
    // daemon going away, and deserves no line on stderr.
    if (!ok || broken) return stopping;
    wake.wait_for(lock, options.report_interval,
                  [&] { return stopping || broken.load() || pending.budgetChanged(); });
    if (stopping) return true;
  }
}

// Cancels the stream (a no-op once it broke), waits for the reader, and
// returns how the stream ended.
grpc::Status DaemonConnection::State::closeControl(grpc::ClientContext& context, std::thread& reader,
                                                   ControlStream& stream) {
  context.TryCancel();
  reader.join();
  {
    std::lock_guard lock(mutex);
    control_context = nullptr;
  }
  return stream.Finish();
}

}  // namespace nk::client
