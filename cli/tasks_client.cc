#include "cli/tasks_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "taskgraph/task_event_translator.h"
#include "cli/rpc_call.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;

struct TasksClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::TasksService::Stub> stub;
};

TasksClient::TasksClient(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout), impl_(std::make_unique<Impl>()) {
  impl_->channel = grpc::CreateChannel("unix:" + socket_path_, grpc::InsecureChannelCredentials());
  impl_->stub = pb::TasksService::NewStub(impl_->channel);
}

TasksClient::~TasksClient() = default;

Result<pb::SessionList> TasksClient::listSessions() {
  return unaryCall(*impl_->stub, &pb::TasksService::Stub::ListSessions, pb::ListSessionsRequest(), "ListSessions",
                   *impl_->channel, socket_path_, timeout_);
}

Status TasksClient::watch(uint64_t session, const std::function<bool(const pb::TaskEventBatch&)>& on_batch) {
  auto deadline = std::max(std::chrono::milliseconds(60000), timeout_ * 12);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  pb::WatchRequest request;
  request.set_session_id(session);
  request.set_follow(false);
  request.set_packed(true);  // the CLI reads packed events itself
  auto reader = impl_->stub->Watch(&context, request);
  pb::TaskEventBatch batch;
  bool stopped = false;
  while (!stopped && reader->Read(&batch)) stopped = !on_batch(batch);
  if (stopped) context.TryCancel();
  grpc::Status status = reader->Finish();
  if (!status.ok() && !stopped) return describeRpcFailure(status, *impl_->channel, socket_path_, deadline, "Watch");
  return {};
}

Result<uint64_t> TasksClient::resolveSession(std::string_view selector, std::string_view command) {
  std::string text(selector);
  char* end = nullptr;
  unsigned long long wanted = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || wanted == 0 || text[0] == '-')
    return invalidArgument(std::string(command) + ": SESSION must be a session id or pid, not '" + text + "'");
  auto sessions = listSessions();
  if (!sessions) return sessions.error();
  for (const auto& s : sessions->sessions())
    if (s.session_id() == wanted) return s.session_id();
  uint64_t id = 0;  // not an id: the newest session of that pid
  for (const auto& s : sessions->sessions())
    if (static_cast<unsigned long long>(s.pid()) == wanted) id = std::max(id, s.session_id());
  if (id == 0)
    return notFound(std::string(command) + ": no task session with id or pid " + text + " (see 'nodekeeper tasks')");
  return id;
}

Result<RecordedGraph> TasksClient::graph(uint64_t session) {
  RecordedGraph recorded;
  recorded.label = "session " + std::to_string(session);
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  Status watched = watch(session, [&](const pb::TaskEventBatch& batch) {
    (void)translator.toGraphEvents(batch, events);  // the daemon checked the batch before recording it
    for (const GraphEvent& e : events) recorded.graph.apply(e);
    return true;
  });
  if (!watched && watched.error().code != ErrorCode::kDataLoss) return watched.error();
  if (!watched) recorded.damage = watched.error().message;
  return recorded;
}

}  // namespace nk::cli
