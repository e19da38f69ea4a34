#include "cli/graph_watcher.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "cli/graphviz_renderer.h"
#include "cli/interrupt_watcher.h"
#include "cli/rpc_call.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "taskgraph/graph_exporter.h"
#include "taskgraph/task_event_translator.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;

// The stream reader's thread: the session's events into `watcher` until the
// session ends or `context` is cancelled.
grpc::Status readEvents(pb::TasksService::Stub& stub, grpc::ClientContext& context, uint64_t session,
                        GraphWatcher& watcher) {
  pb::WatchRequest request;
  request.set_session_id(session);
  request.set_follow(true);
  request.set_packed(true);
  auto stream = stub.Watch(&context, request);
  pb::TaskEventBatch batch;
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  while (stream->Read(&batch)) {
    (void)translator.toGraphEvents(batch, events);  // the daemon checked the batch before recording it
    // Applied at once: the events' names point into `batch`, which the
    // graph copies.
    watcher.apply(events);
  }
  return stream->Finish();
}

}  // namespace

GraphWatcher::GraphWatcher(Output output, std::ostream& out, std::ostream& err)
    : output_(std::move(output)), out_(out), err_(err) {}

Status GraphWatcher::follow(const std::string& socket_path, std::chrono::milliseconds timeout, uint64_t session) {
  auto channel = grpc::CreateChannel("unix:" + socket_path, grpc::InsecureChannelCredentials());
  auto stub = pb::TasksService::NewStub(channel);
  grpc::ClientContext context;  // no deadline: it lasts as long as the program
  std::atomic<bool> ended{false};
  grpc::Status finished;
  std::thread reader([&] {
    finished = readEvents(*stub, context, session, *this);
    ended.store(true);
  });
  InterruptWatcher interrupts;
  Progress progress = refreshUntilEnded(ended, interrupts);
  // Ctrl-C, a failed refresh or the end: the reader stops either way.
  context.TryCancel();
  reader.join();
  if (!progress.outcome) return Error{progress.outcome.error().code, "graph: " + progress.outcome.error().message};
  bool data_loss = finished.error_code() == grpc::StatusCode::DATA_LOSS;
  if (!progress.interrupted && !finished.ok() && !data_loss)
    return describeRpcFailure(finished, *channel, socket_path, timeout, "Watch");
  if (data_loss) err_ << "nodekeeper: warning: " << finished.error_message() << "; drawing what was read before it\n";
  // The last state once more, even unchanged: FILE then holds the whole
  // graph the session ended with (or what there was at Ctrl-C).
  if (changed() || !progress.refreshed || !progress.interrupted) {
    Status last = refresh();
    if (!last) return Error{last.error().code, "graph: " + last.error().message};
  }
  return {};
}

void GraphWatcher::apply(std::span<const GraphEvent> events) {
  if (events.empty()) return;
  std::lock_guard lock(mutex_);
  for (const GraphEvent& e : events) graph_.apply(e);
  changed_ = true;
}

bool GraphWatcher::changed() const {
  std::lock_guard lock(mutex_);
  return changed_;
}

// Refreshes at most every kRefreshInterval, and only when the graph changed,
// until the session ends, Ctrl-C, or a refresh fails.
GraphWatcher::Progress GraphWatcher::refreshUntilEnded(const std::atomic<bool>& ended,
                                                       const InterruptWatcher& interrupts) {
  constexpr auto kRefreshInterval = std::chrono::milliseconds(500);
  constexpr auto kTick = std::chrono::milliseconds(50);
  Progress progress;
  auto last_refresh = std::chrono::steady_clock::now() - kRefreshInterval;
  while (!ended.load()) {
    if (interrupts.valid() ? interrupts.wait(kTick) : (std::this_thread::sleep_for(kTick), false)) {
      progress.interrupted = true;
      break;
    }
    bool due = std::chrono::steady_clock::now() - last_refresh >= kRefreshInterval;
    if (!due || !changed()) continue;
    progress.outcome = refresh();
    if (!progress.outcome) break;
    progress.refreshed = true;
    last_refresh = std::chrono::steady_clock::now();
  }
  return progress;
}

Status GraphWatcher::refresh() {
  std::ostringstream dot;
  size_t tasks = 0, edges = 0;
  {
    std::lock_guard lock(mutex_);
    GraphExporter::dot(graph_, dot);
    tasks = graph_.tasks().size();
    edges = graph_.edges().size();
    changed_ = false;
  }
  auto text = render(dot.str());
  if (!text) return text.error();
  Status written = replaceFile(*text);
  if (!written) return written;
  reportProgress(tasks, edges);
  return {};
}

Result<std::string> GraphWatcher::render(std::string dot) const {
  if (output_.format != "svg") return dot;
  return GraphvizRenderer::toSvg(dot);
}

// Written aside and renamed over FILE, so a viewer never reads half.
Status GraphWatcher::replaceFile(const std::string& text) const {
  const std::string temporary = output_.path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return invalidArgument("cannot write " + temporary + ": " + std::strerror(errno));
    file << text;
    file.close();
    if (!file) return internalError("writing " + temporary + " failed");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, output_.path, ec);
  if (ec) return internalError("cannot rename " + temporary + " to " + output_.path + ": " + ec.message());
  return {};
}

void GraphWatcher::reportProgress(size_t tasks, size_t edges) {
  if (output_.json)
    out_ << nlohmann::ordered_json{{"tasks", tasks}, {"edges", edges}, {"out", output_.path}}.dump() << "\n"
         << std::flush;
  else
    err_ << "graph: " << tasks << " tasks, " << edges << " edges -> " << output_.path << "\n" << std::flush;
}

}  // namespace nk::cli
