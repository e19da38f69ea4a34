#include "daemon_connection.h"

#include <sys/stat.h>

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "backoff.h"
#include "connection_notifier.h"
#include "nodekeeper/v1/apps.grpc.pb.h"
#include "thread_count_applier.h"

namespace nk::client {

namespace v1 = nodekeeper::v1;

// Shared between the owner and the background thread, so a thread left
// detached by a bounded stop() never touches freed memory.
struct DaemonConnection::State {
  State(DaemonConnectionOptions o, ThreadCountApplier& a)
      : options(std::move(o)), applier(a), notifier(options.socket_path, &ConnectionNotifier::processAbsenceSaid()) {}

  DaemonConnectionOptions options;
  ThreadCountApplier& applier;
  ConnectionNotifier notifier;

  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  bool done = false;
  std::set<int> live_tids;
  std::vector<std::pair<int, bool>> thread_events;  // (tid, ended) since the last flush
  uint64_t budget_mw = 0;
  bool budget_dirty = false;
  grpc::ClientContext* control_context = nullptr;  // to cancel the stream on stop

  std::atomic<uint32_t> team_size{0};
  std::atomic<bool> managed{false};

  void run();
  bool session(Backoff& backoff);
  void say(const std::optional<std::string>& line);
  void debug(const std::string& line);
  std::chrono::system_clock::time_point deadline() const {
    return std::chrono::system_clock::now() + options.rpc_deadline;
  }
};

DaemonConnection::DaemonConnection(DaemonConnectionOptions options, ThreadCountApplier& applier)
    : state_(std::make_shared<State>(std::move(options), applier)) {
  state_->budget_mw = state_->options.power_budget_mw;
}

DaemonConnection::~DaemonConnection() { stop(std::chrono::milliseconds(1000)); }

void DaemonConnection::start() {
  std::thread([state = state_] {
    state->run();
    std::lock_guard lock(state->mutex);
    state->done = true;
    state->wake.notify_all();
  }).detach();
}

// Asks the thread to unregister and leave; waits at most `grace` (the RPCs
// have their own short deadlines, so this only expires if gRPC misbehaves).
void DaemonConnection::stop(std::chrono::milliseconds grace) {
  std::unique_lock lock(state_->mutex);
  if (!state_->stopping) {
    state_->stopping = true;
    if (state_->control_context) state_->control_context->TryCancel();
    state_->wake.notify_all();
  }
  state_->wake.wait_for(lock, grace, [&] { return state_->done; });
}

void DaemonConnection::threadBegan(int tid) {
  std::lock_guard lock(state_->mutex);
  state_->live_tids.insert(tid);
  state_->thread_events.emplace_back(tid, false);
}

void DaemonConnection::threadEnded(int tid) {
  std::lock_guard lock(state_->mutex);
  state_->live_tids.erase(tid);
  state_->thread_events.emplace_back(tid, true);
}

void DaemonConnection::setPowerBudget(uint64_t mw) {
  std::lock_guard lock(state_->mutex);
  state_->budget_mw = mw;
  state_->budget_dirty = true;
  state_->wake.notify_all();
}

void DaemonConnection::reportTeamSize(uint32_t size) { state_->team_size.store(size, std::memory_order_relaxed); }

bool DaemonConnection::managed() const { return state_->managed.load(std::memory_order_relaxed); }

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
  struct stat socket_stat{};
  if (::stat(options.socket_path.c_str(), &socket_stat) != 0 || !S_ISSOCK(socket_stat.st_mode)) {
    say(notifier.failed("no socket"));
    debug("no socket at " + options.socket_path);
    std::lock_guard lock(mutex);
    return stopping;
  }
  auto channel = grpc::CreateChannel("unix:" + options.socket_path, grpc::InsecureChannelCredentials());
  auto stub = v1::AppsService::NewStub(channel);

  v1::App app;
  {
    v1::RegisterAppRequest request;
    request.set_name(options.app_name);
    request.set_max_threads(options.max_threads);
    {
      std::lock_guard lock(mutex);
      request.set_power_budget_mw(budget_mw);
      budget_dirty = false;
    }
    grpc::ClientContext context;
    context.set_deadline(deadline());
    grpc::Status status = stub->RegisterApp(&context, request, &app);
    if (!status.ok()) {
      say(notifier.failed(describe(status)));
      debug("RegisterApp failed: " + describe(status));
      std::lock_guard lock(mutex);
      return stopping;
    }
  }
  const uint64_t app_id = app.app_id();
  managed = true;
  backoff.reset();
  say(notifier.connected());
  debug("registered as app " + std::to_string(app_id));

  auto unregister = [&] {
    v1::UnregisterAppRequest request;
    request.set_app_id(app_id);
    v1::UnregisterAppResponse response;
    grpc::ClientContext context;
    context.set_deadline(deadline());
    (void)stub->UnregisterApp(&context, request, &response);
    managed = false;
  };

  // Returns false if the daemon refused or did not answer.
  auto flush = [&](bool all) -> bool {
    std::vector<std::pair<int, bool>> events;
    uint64_t budget = 0;
    bool send_budget = false;
    {
      std::lock_guard lock(mutex);
      if (all) {
        thread_events.clear();
        for (int tid : live_tids) events.emplace_back(tid, false);
      } else {
        events.swap(thread_events);
      }
      send_budget = std::exchange(budget_dirty, false);
      budget = budget_mw;
    }
    for (auto [tid, ended] : events) {
      v1::RegisterThreadRequest request;
      request.set_app_id(app_id);
      request.set_tid(tid);
      request.set_end(ended);
      v1::RegisterThreadResponse response;
      grpc::ClientContext context;
      context.set_deadline(deadline());
      grpc::Status status = stub->RegisterThread(&context, request, &response);
      if (!status.ok()) return false;
      debug(std::string(ended ? "thread ended " : "thread registered ") + std::to_string(tid));
    }
    if (send_budget) {
      v1::SetPowerBudgetRequest request;
      request.set_app_id(app_id);
      request.set_power_budget_mw(budget);
      v1::App response;
      grpc::ClientContext context;
      context.set_deadline(deadline());
      grpc::Status status = stub->SetPowerBudget(&context, request, &response);
      if (!status.ok()) say("nodekeeper: power budget of " + std::to_string(budget) + " mW refused (" + describe(status) + ")");
    }
    return true;
  };

  if (!flush(true)) {
    say(notifier.failed("thread registration failed"));
    managed = false;
    std::lock_guard lock(mutex);
    return stopping;
  }

  grpc::ClientContext control;
  {
    std::lock_guard lock(mutex);
    if (stopping) {
      unregister();
      return true;
    }
    control_context = &control;
  }
  auto stream = stub->Control(&control);
  std::atomic<bool> broken{false};
  std::thread reader([&] {
    v1::AppDecision decision;
    while (stream->Read(&decision)) {
      applier.setDecision(decision.thread_count());
      debug("decision D=" + std::to_string(decision.thread_count()));
    }
    broken = true;
    std::lock_guard lock(mutex);
    wake.notify_all();
  });

  bool stop_now = false;
  bool ok = true;
  for (;;) {
    v1::AppReport report;
    report.set_app_id(app_id);
    report.set_team_size(team_size.load(std::memory_order_relaxed));
    if (!stream->Write(report)) ok = false;
    if (ok && !flush(false)) ok = false;
    std::unique_lock lock(mutex);
    if (!ok || broken) {
      // stop() cancels the stream itself: that is the app ending, not the
      // daemon going away, and deserves no line on stderr.
      stop_now = stopping;
      break;
    }
    wake.wait_for(lock, options.report_interval, [&] { return stopping || broken.load() || budget_dirty; });
    if (stopping) {
      stop_now = true;
      break;
    }
  }
  control.TryCancel();
  reader.join();
  {
    std::lock_guard lock(mutex);
    control_context = nullptr;
  }
  grpc::Status status = stream->Finish();
  if (stop_now) {
    unregister();
    return true;
  }
  managed = false;
  say(notifier.failed("control stream closed: " + describe(status)));
  std::lock_guard lock(mutex);
  return stopping;
}

}  // namespace nk::client
