#include "cli/ui/session_feed.h"

#include <utility>

#include "cli/tasks_client.h"
#include "cli/ui/proto_json.h"

namespace v1 = nodekeeper::v1;

namespace nk::ui {

namespace {

constexpr auto kFlushInterval = std::chrono::milliseconds(100);
// After the program has gone, the daemon's follower may still be sending
// the recording's tail (a big session's tail takes seconds): `end` waits
// until this feed has had as many graph events as the daemon counts for
// the session, asking it this often; or, should the counts never meet (a
// damaged batch), until no event came for kQuietBeforeEnd.
constexpr auto kCountCheckInterval = std::chrono::milliseconds(250);
constexpr auto kQuietBeforeEnd = std::chrono::seconds(10);
constexpr size_t kRunsPerEvent = 5000;

nlohmann::json newsJson(const v1::DebugUpdate& update) {
  return {{"ok", update.ack().ok()}, {"message", update.ack().message()}};
}

}  // namespace

SessionFeed::SessionFeed(const Where& where, uint64_t session) : where_(where), session_(session) {}

Result<std::unique_ptr<SessionFeed>> SessionFeed::open(const Where& where, uint64_t session, bool live) {
  auto feed = std::make_unique<SessionFeed>(where, session);
  SessionFeed* self = feed.get();
  cli::DebugClient::Callbacks callbacks;
  callbacks.events = [self](const v1::TaskEventBatch& batch) { self->onBatch(batch); };
  callbacks.news = [self](const v1::DebugUpdate& update) { self->onNews(update); };
  self->live_ = live;
  self->client_ = std::make_unique<cli::DebugClient>(where.socket_path, callbacks);
  // A live session's graph comes on this stream; an ended one's is read
  // from its recording once, below.
  auto attached = self->client_->attach(session, live, 0, std::max(where.timeout, std::chrono::milliseconds(5000)));
  if (!attached) return attached.error();
  if (!attached->ack().ok()) return failedPrecondition(attached->ack().message());
  {
    std::lock_guard lock(self->mutex_);
    if (attached->has_status()) self->noteStatus(attached->status());
    self->news_.push_back(newsJson(*attached));
  }
  if (!live) self->recording_reader_ = std::thread([self] { self->readRecording(); });
  self->flusher_ = std::thread([self] { self->flushLoop(); });
  return feed;
}

SessionFeed::~SessionFeed() { close(); }

void SessionFeed::close() {
  stopping_.store(true);
  if (flusher_.joinable()) flusher_.join();
  // Closing the Debug stream releases what this frontend holds (after the
  // daemon's grace).
  if (client_) client_->close();
  if (recording_reader_.joinable()) recording_reader_.join();
  queue_.close();
}

bool SessionFeed::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

bool SessionFeed::broken() const {
  std::lock_guard lock(mutex_);
  return broken_;
}

void SessionFeed::onBatch(const v1::TaskEventBatch& batch) {
  std::lock_guard lock(mutex_);
  // Structured, so that the sync events (taskwaits, barriers) can be read
  // too; the daemon sends frontends the structured form anyway.
  translator_.toStructured(batch, structured_);
  (void)translator_.toGraphEvents(structured_, events_);  // the daemon checked the batch
  for (const GraphEvent& e : events_) graph_.apply(e);
  graph_events_received_ += events_.size();
  delta_.note(graph_, events_);
  tracker_.apply(events_);
  runs_.noteSync(structured_);
  last_batch_at_ = std::chrono::steady_clock::now();
}

void SessionFeed::onNews(const v1::DebugUpdate& update) {
  std::lock_guard lock(mutex_);
  if (update.has_ack() && !update.ack().message().empty()) news_.push_back(newsJson(update));
  if (update.has_status())
    noteStatus(update.status());
  else
    status_stale_ = true;  // e.g. the program has gone: the status says whether it is live
}

void SessionFeed::noteStatus(const v1::DebugStatus& status) {
  if (status_ && status_->SerializeAsString() == status.SerializeAsString()) return;
  status_ = status;
  status_changed_ = true;
  if (live_ && !status.live() && !program_gone_) {
    program_gone_ = true;
    gone_at_ = std::chrono::steady_clock::now();
  }
}

Result<v1::DebugUpdate> SessionFeed::command(v1::DebugCommand command) {
  auto answer = client_->call(std::move(command), std::max(where_.timeout, std::chrono::milliseconds(10000)));
  if (answer && answer->has_status()) {
    std::lock_guard lock(mutex_);
    noteStatus(answer->status());
  }
  return answer;
}

void SessionFeed::flushLoop() {
  while (!stopping_.load()) {
    std::this_thread::sleep_for(kFlushInterval);
    bool ask_status = false;
    {
      std::lock_guard lock(mutex_);
      if (ended_) return;
      flush();
      ask_status = std::exchange(status_stale_, false);
    }
    if (auto why = client_->endedBecause()) {
      std::lock_guard lock(mutex_);
      flush();
      queue_.push("error", {{"message", "the debug stream to nodekeeperd ended: " + why->message}});
      fail();
      return;
    }
    if (ask_status) {
      // Not on the stream's reader thread, which must read the answer.
      v1::DebugCommand status;
      status.mutable_status();
      auto answer = client_->call(status, where_.timeout);
      std::lock_guard lock(mutex_);
      if (answer && answer->has_status()) {
        noteStatus(answer->status());
      } else if (!answer) {
        queue_.push("error", {{"message", answer.error().message}});
        fail();
        return;
      }
    }
    bool gone = false;
    {
      std::lock_guard lock(mutex_);
      gone = program_gone_;
    }
    bool all_received = false;
    auto now = std::chrono::steady_clock::now();
    if (gone && now - last_count_check_ >= kCountCheckInterval) {
      last_count_check_ = now;
      cli::TasksClient tasks(where_.socket_path, where_.timeout);
      if (auto list = tasks.listSessions())
        for (const v1::Session& listed : list->sessions())
          if (listed.session_id() == session_ && !listed.live()) {
            std::lock_guard lock(mutex_);
            all_received = graph_events_received_ >= listed.events();
          }
    }
    std::lock_guard lock(mutex_);
    bool quiet = now - last_batch_at_ >= kQuietBeforeEnd && now - gone_at_ >= kQuietBeforeEnd;
    if ((program_gone_ && (all_received || quiet)) || recording_read_) {
      flush();
      finish("the session ended");
      return;
    }
  }
}

void SessionFeed::flush() {
  if (!delta_.empty())
    for (nlohmann::json& event : delta_.take(graph_)) queue_.push("graph", event);
  if (runs_.pending()) queue_.push("runs", runs_.take());
  if (status_changed_ && status_) {
    queue_.push("status", ProtoJson::toJson(*status_));
    status_changed_ = false;
  }
  while (!news_.empty()) {
    queue_.push("news", news_.front());
    news_.pop_front();
  }
}

void SessionFeed::fail() {
  // `error` is the stream's last event: no `end` after it.
  ended_ = true;
  broken_ = true;
  queue_.close();
}

void SessionFeed::finish(const std::string& reason) {
  ended_ = true;
  end_reason_ = reason;
  queue_.push("end", {{"reason", reason}});
  queue_.close();
}

SessionFeed::Subscription SessionFeed::subscribe() {
  std::lock_guard lock(mutex_);
  Subscription s;
  for (const nlohmann::json& event : delta_.everything(graph_)) s.first += EventQueue::frame("graph", event);
  for (const nlohmann::json& event : runs_.everything(kRunsPerEvent)) s.first += EventQueue::frame("runs", event);
  if (status_) s.first += EventQueue::frame("status", ProtoJson::toJson(*status_));
  if (ended_) s.first += EventQueue::frame("end", {{"reason", end_reason_}});
  s.reader = queue_.subscribe();
  return s;
}

void SessionFeed::readRecording() {
  cli::TasksClient tasks(where_.socket_path, where_.timeout);
  TaskEventTranslator translator;  // Watch's stream is packed: its own translator
  v1::TaskEventBatch structured;
  std::vector<GraphEvent> events;
  Status watched = tasks.watch(session_, [&](const v1::TaskEventBatch& batch) {
    if (stopping_.load()) return false;
    std::lock_guard lock(mutex_);
    translator.toStructured(batch, structured);
    (void)translator.toGraphEvents(structured, events);
    for (const GraphEvent& e : events) graph_.apply(e);
    delta_.note(graph_, events);
    tracker_.apply(events);
    runs_.noteSync(structured);
    return true;
  });
  std::lock_guard lock(mutex_);
  if (!watched && watched.error().code != ErrorCode::kDataLoss)
    news_.push_back({{"ok", false}, {"message", watched.error().message}});
  else if (!watched)
    news_.push_back({{"ok", false}, {"message", "the recording is damaged: " + watched.error().message +
                                                    "; the graph shows what was read before it"}});
  recording_read_ = true;
}

}  // namespace nk::ui
