#include "client.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "daemon_connection.h"
#include "omp_runtime.h"
#include "task_tool.h"

namespace nk::client {

namespace {

// Nesting depth of parallel regions on this thread, and whether it is a
// root (initial) thread: D is applied only when a root's outermost region
// ends. initial-exec TLS keeps the hot path free of __tls_get_addr.
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local bool t_root = false;

int currentTid() { return static_cast<int>(::syscall(SYS_gettid)); }

void sayLine(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

std::string programName() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "app" : name;
}

}  // namespace

Client& Client::instance() {
  static Client* client = new Client();  // leaked on purpose, see the header
  return *client;
}

// Reads the environment and starts the background connection; idempotent.
// Never blocks on the daemon.
int Client::init() {
  std::lock_guard lock(mutex_);
  if (started_) return 0;
  started_ = true;
  options_ = ClientOptions::fromEnvironment([](const char* name) -> const char* { return std::getenv(name); });
  for (const auto& warning : options_.warnings) sayLine(warning);
  applier_.setSetter(OmpRuntime::setNumThreads());
  applier_.setGetter(OmpRuntime::getMaxThreads());
  if (!options_.forced_thread_counts.empty()) {
    if (options_.debug) sayLine("nodekeeper: debug: test hook NK_TEST_FORCE_THREADS active");
    return 0;  // the test hook stands in for the daemon
  }
  DaemonConnectionOptions connection_options;
  connection_options.socket_path = options_.socket_path;
  connection_options.app_name = programName();
  connection_options.power_budget_mw = options_.power_budget_mw;
  connection_options.tracing_only = options_.tracingOnly();
  // The team size the program asked for; 0 lets the daemon take the node's
  // core count (an emulated node has more cores than the host).
  connection_options.max_threads = options_.max_threads;
  connection_options.debug = options_.debug;
  connection_ = std::make_unique<DaemonConnection>(connection_options, applier_);
  live_connection_.store(connection_.get(), std::memory_order_release);
  if (options_.debug) sayLine("nodekeeper: debug: connecting to " + options_.socket_path);
  connection_->start();
  return 0;
}

// Unregisters (bounded: returns within about a second even if the daemon
// hangs) and stops the background thread; idempotent.
int Client::finalize() {
  std::lock_guard lock(mutex_);
  if (!started_ || finalized_) return 0;
  finalized_ = true;
  if (options_.debug) debugSummary();
  // A program without OpenMP has no OMPT finalize to flush its task events:
  // this (nk_finalize, or the library's destructor at exit) is its last
  // chance. Idempotent, so the OpenMP path's earlier stop is not repeated.
  TaskTool::stop();
  if (connection_) connection_->stop(std::chrono::milliseconds(1000));
  // connection_ is kept: the background thread may still hold its state.
  return 0;
}

void Client::debugSummary() {
  sayLine("nodekeeper: debug: threads_begun=" + std::to_string(threads_begun_.load()) +
          " threads_ended=" + std::to_string(threads_ended_.load()) +
          " parallel_regions=" + std::to_string(regions_.load()) +
          " applied_D=" + std::to_string(applier_.applied()) +
          " applies=" + std::to_string(applier_.applyCount()));
}

int Client::setPowerBudgetMw(uint64_t mw) {
  if (mw == 0 || mw > static_cast<uint64_t>(INT64_MAX)) return -EINVAL;  // the daemon would refuse it too
  init();
  std::lock_guard lock(mutex_);
  if (finalized_) return -ESHUTDOWN;
  options_.power_budget_mw = mw;
  if (connection_) connection_->setPowerBudget(mw);
  return 0;
}

int Client::threadCount(uint32_t* d) {
  if (!d) return -EINVAL;
  uint32_t decision = applier_.decision();
  if (decision == 0) return -EAGAIN;
  *d = decision;
  return 0;
}

int Client::applyThreadCount() {
  applier_.setSetter(OmpRuntime::setNumThreads());
  applier_.setGetter(OmpRuntime::getMaxThreads());
  if (!applier_.hasPending()) return 0;
  return applier_.applyPending() ? 0 : -ENOSYS;
}

// Only NODEKEEPER_TASKS turns on OpenMP task capture: a tool the C API
// started (with the variable unset) does not.
bool Client::ompInitialized() {
  init();
  applier_.setSetter(OmpRuntime::setNumThreads());
  applier_.setGetter(OmpRuntime::getMaxThreads());
  std::lock_guard lock(mutex_);
  TaskTool::start(options_);
  return options_.task_events != TaskEventMode::kOff && TaskTool::instance() != nullptr;
}

void Client::startTasksForRuntime() {
  init();
  std::lock_guard lock(mutex_);
  if (finalized_) return;  // nobody would flush them
  ClientOptions options = options_;
  if (!options.task_events_explicit) options.task_events = TaskEventMode::kLossless;
  TaskTool::start(options);
}

// Thread registration goes into a queue drained by the background thread.
void Client::threadBegin(bool initial) {
  t_root = initial;
  if (options_.debug) threads_begun_.fetch_add(1, std::memory_order_relaxed);
  if (auto* connection = live_connection_.load(std::memory_order_acquire)) connection->threadBegan(currentTid());
}

void Client::threadEnd() {
  if (options_.debug) threads_ended_.fetch_add(1, std::memory_order_relaxed);
  if (auto* connection = live_connection_.load(std::memory_order_acquire)) connection->threadEnded(currentTid());
}

void Client::parallelBegin(uint32_t requested) {
  ++t_depth;
  if (options_.debug) regions_.fetch_add(1, std::memory_order_relaxed);
  if (t_depth == 1 && t_root) {
    if (auto* connection = live_connection_.load(std::memory_order_relaxed)) connection->reportTeamSize(requested);
  }
}

// After a region, on the encountering thread: the place where D is applied.
void Client::parallelEnd() {
  if (--t_depth != 0 || !t_root) return;
  if (!options_.forced_thread_counts.empty()) {
    size_t next = forced_next_.load(std::memory_order_relaxed);
    if (next < options_.forced_thread_counts.size()) {
      forced_next_.store(next + 1, std::memory_order_relaxed);
      applier_.setDecision(options_.forced_thread_counts[next]);
    }
  }
  applier_.applyPending();
}

void Client::ompFinalized() {}

}  // namespace nk::client
