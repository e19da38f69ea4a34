#include "cli/ui/ui_server.h"

#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <optional>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cli/apps_client.h"
#include "cli/faults_client.h"
#include "cli/gdb_process.h"
#include "cli/node_client.h"
#include "cli/tasks_client.h"
#include "cli/ui/command_request.h"
#include "cli/ui/job_faults_feed.h"
#include "cli/ui/node_feed.h"
#include "cli/ui/proto_json.h"
#include "cli/ui/request_guard.h"
#include "cli/ui/session_feed.h"
#include "web_assets.h"

namespace v1 = nodekeeper::v1;

namespace nk::ui {

namespace {

using nlohmann::json;

// Streams write at least this often: a closed tab is found by the write
// failing, so its stream ends and its slot is freed.
constexpr auto kKeepAlive = std::chrono::seconds(2);
constexpr auto kStreamWait = std::chrono::milliseconds(250);

int httpStatus(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kPermissionDenied: return 403;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kFailedPrecondition: return 409;
    case ErrorCode::kResourceExhausted: return 429;
    case ErrorCode::kUnavailable: return 503;
    case ErrorCode::kUnimplemented: return 501;
    default: return 500;
  }
}

void sendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

void sendError(httplib::Response& res, const Error& error) {
  sendJson(res, httpStatus(error.code), {{"ok", false}, {"message", error.message}});
}

void sendText(httplib::Response& res, int status, const std::string& line) {
  res.status = status;
  res.set_content(line + "\n", "text/plain; charset=utf-8");
}

std::optional<uint64_t> parseId(const std::string& text) {
  uint64_t value = 0;
  auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (problem != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string userName(uint32_t uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// The console's gdb command line, shell-quoted where a word needs it.
std::string commandLine(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    if (!word.empty() && word.find_first_of(" \t'\"\\$`!*?;&|<>()") == std::string::npos) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace

struct UiServer::Impl {
  Options options;
  UiToken token;
  httplib::Server http;
  std::optional<RequestGuard> guard;
  std::atomic<size_t> streams{0};
  std::atomic<bool> stopping{false};

  std::mutex feeds_mutex;
  std::map<uint64_t, std::shared_ptr<SessionFeed>> feeds;
  std::shared_ptr<NodeFeed> node_feed;

  Impl(Options o, UiToken t) : options(std::move(o)), token(std::move(t)) {}

  void routes();
  httplib::Server::HandlerResponse admit(const httplib::Request& req, httplib::Response& res);
  Result<std::shared_ptr<SessionFeed>> feedFor(uint64_t session);
  void whoami(httplib::Response& res);
  void sessions(httplib::Response& res);
  void jobs(httplib::Response& res);
  void topology(httplib::Response& res);
  void graph(const httplib::Request& req, httplib::Response& res);
  void command(const httplib::Request& req, httplib::Response& res);
  void node(httplib::Response& res);
  void jobFaults(const httplib::Request& req, httplib::Response& res);
  // An SSE response reading `queue` from `reader`, after `first`.
  void stream(httplib::Response& res, std::shared_ptr<void> owner, EventQueue& queue, uint64_t reader,
              std::string first);
  bool takeStreamSlot(httplib::Response& res);
};

UiServer::UiServer(Options options, UiToken token) : impl_(std::make_unique<Impl>(std::move(options), std::move(token))) {
  // One thread per open stream, and some for the rest.
  const size_t threads = impl_->options.max_streams + 16;
  impl_->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl_->http.set_payload_max_length(RequestGuard::kMaxBody);
  impl_->http.set_keep_alive_timeout(5);
  // httplib's default adds SO_REUSEPORT, with which a second server of the
  // same user binds the same port and takes half of its connections: a
  // port in use must be an error instead.
  impl_->http.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  impl_->routes();
}

UiServer::~UiServer() { stop(); }

Result<uint16_t> UiServer::bind(uint16_t port) {
  int bound = port == 0 ? impl_->http.bind_to_any_port("127.0.0.1")
                        : (impl_->http.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound <= 0)
    return unavailable("ui: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " +
                       (port ? "the port is in use (or not yours to bind)" : "no free port"));
  impl_->guard.emplace(static_cast<uint16_t>(bound));
  return static_cast<uint16_t>(bound);
}

void UiServer::run() { impl_->http.listen_after_bind(); }

void UiServer::stop() {
  if (impl_->stopping.exchange(true)) return;
  // Streams see `stopping` within kStreamWait and end; then the listener.
  impl_->http.stop();
  std::map<uint64_t, std::shared_ptr<SessionFeed>> feeds;
  std::shared_ptr<NodeFeed> node;
  {
    std::lock_guard lock(impl_->feeds_mutex);
    feeds.swap(impl_->feeds);
    node = std::move(impl_->node_feed);
  }
  for (auto& [id, feed] : feeds) feed->close();
  if (node) node->close();
}

httplib::Server::HandlerResponse UiServer::Impl::admit(const httplib::Request& req, httplib::Response& res) {
  using HR = httplib::Server::HandlerResponse;
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-store");
  // get_header_value returns copies: held here while the guard looks.
  const std::string host = req.get_header_value("Host"), origin = req.get_header_value("Origin"),
                    content_type = req.get_header_value("Content-Type");
  RequestGuard::Request checked;
  checked.method = req.method;
  checked.host = host;
  if (req.has_header("Origin")) checked.origin = origin;
  checked.content_type = content_type;
  // Not read yet (routing reads it after this): its announced length.
  checked.body_size = 0;
  if (auto length = parseId(req.get_header_value("Content-Length"))) checked.body_size = *length;
  if (auto refusal = guard->check(checked)) {
    sendText(res, refusal->status, refusal->message);
    return HR::Handled;
  }
  // The first visit, with the printed URL: the token moves into a cookie
  // and out of the address bar (and the browser's history).
  if (req.method == "GET" && req.path == "/" && req.has_param("token")) {
    if (!token.matches(req.get_param_value("token"))) {
      sendText(res, 403, "refused: wrong token (use the URL 'nodekeeper ui' printed)");
      return HR::Handled;
    }
    res.set_header("Set-Cookie", token.setCookieValue(UiToken::cookieName(guard->port())));
    res.set_redirect("/", 303);
    return HR::Handled;
  }
  const std::string cookie = req.get_header_value("Cookie"), authorization = req.get_header_value("Authorization");
  if (!token.authorises(cookie, authorization, UiToken::cookieName(guard->port()))) {
    sendText(res, 403, "refused: no valid token (open the URL 'nodekeeper ui' printed, with its ?token=)");
    return HR::Handled;
  }
  return HR::Unhandled;
}

void UiServer::Impl::routes() {
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) { return admit(req, res); });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 404) sendText(res, 404, "not found: " + req.path.substr(0, 200));
    else if (res.status == 413) sendText(res, 413, "refused: the body is over 64 KiB");
    else sendText(res, res.status, "refused: HTTP " + std::to_string(res.status));
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    sendJson(res, 500, {{"ok", false}, {"message", "internal error in nodekeeper ui"}});
  });

  auto asset = [](const httplib::Request& req, httplib::Response& res) {
    auto found = findWebAsset(req.path == "/" ? std::string_view("/index.html") : std::string_view(req.path));
    if (!found) return sendText(res, 404, "not found: " + req.path.substr(0, 200));
    res.set_content(std::string(found->body), std::string(found->content_type));
  };
  http.Get("/", asset);
  http.Get("/index.html", asset);
  http.Get("/app.js", asset);
  http.Get("/app.css", asset);

  http.Get("/api/whoami", [this](const httplib::Request&, httplib::Response& res) { whoami(res); });
  http.Get("/api/sessions", [this](const httplib::Request&, httplib::Response& res) { sessions(res); });
  http.Get("/api/jobs", [this](const httplib::Request&, httplib::Response& res) { jobs(res); });
  http.Get("/api/topology", [this](const httplib::Request&, httplib::Response& res) { topology(res); });
  http.Get("/api/node", [this](const httplib::Request&, httplib::Response& res) { node(res); });
  http.Get(R"(/api/jobs/([^/]+)/faults)",
           [this](const httplib::Request& req, httplib::Response& res) { jobFaults(req, res); });
  http.Get(R"(/api/sessions/([^/]+)/graph)",
           [this](const httplib::Request& req, httplib::Response& res) { graph(req, res); });
  http.Post(R"(/api/sessions/([^/]+)/command)",
            [this](const httplib::Request& req, httplib::Response& res) { command(req, res); });
}

void UiServer::Impl::whoami(httplib::Response& res) {
  cli::NodeClient client(options.socket_path, options.timeout);
  auto identity = client.whoAmI();
  if (!identity) return sendError(res, identity.error());
  sendJson(res, 200,
           {{"uid", identity->uid()},
            {"user", userName(identity->uid())},
            {"admin", identity->role() == v1::ROLE_ADMIN},
            {"node", hostName()}});
}

void UiServer::Impl::sessions(httplib::Response& res) {
  cli::TasksClient client(options.socket_path, options.timeout);
  auto list = client.listSessions();
  if (!list) return sendError(res, list.error());
  json sessions = json::array();
  for (const v1::Session& s : list->sessions()) {
    json entry = ProtoJson::toJson(s);
    // The contract's name for session_id.
    entry["id"] = s.session_id();
    entry.erase("session_id");
    sessions.push_back(std::move(entry));
  }
  sendJson(res, 200, {{"sessions", std::move(sessions)}});
}

void UiServer::Impl::jobs(httplib::Response& res) {
  cli::FaultsClient client(options.socket_path, options.timeout);
  auto list = client.listJobs();
  if (!list) return sendError(res, list.error());
  json jobs = ProtoJson::toJson(*list);
  if (!jobs.contains("jobs")) jobs["jobs"] = json::array();
  sendJson(res, 200, jobs);
}

void UiServer::Impl::topology(httplib::Response& res) {
  cli::NodeClient client(options.socket_path, options.timeout);
  auto topology = client.getTopology();
  if (!topology) return sendError(res, topology.error());
  sendJson(res, 200, ProtoJson::toJson(*topology));
}

Result<std::shared_ptr<SessionFeed>> UiServer::Impl::feedFor(uint64_t session) {
  std::lock_guard lock(feeds_mutex);
  if (stopping.load()) return unavailable("nodekeeper ui is stopping");
  auto found = feeds.find(session);
  if (found != feeds.end() && !found->second->broken()) return found->second;
  if (found != feeds.end()) {
    // Its tabs got `error`; theirs ends with it, a new one attaches afresh.
    found->second->close();
    feeds.erase(found);
  }
  // Listed: whether it is live. Not listed (another user's, or none such):
  // the attach below gets the daemon's own refusal.
  bool live = true;
  cli::TasksClient tasks(options.socket_path, options.timeout);
  if (auto list = tasks.listSessions()) {
    for (const v1::Session& s : list->sessions())
      if (s.session_id() == session) live = s.live();
  } else {
    return list.error();
  }
  auto opened = SessionFeed::open({options.socket_path, options.timeout}, session, live);
  if (!opened) return opened.error();
  std::shared_ptr<SessionFeed> feed = std::move(*opened);
  feeds[session] = feed;
  return feed;
}

bool UiServer::Impl::takeStreamSlot(httplib::Response& res) {
  if (streams.fetch_add(1) >= options.max_streams) {
    streams.fetch_sub(1);
    sendJson(res, 503,
             {{"ok", false},
              {"message", "too many open streams (" + std::to_string(options.max_streams) +
                              "); close a tab of this page"}});
    return false;
  }
  return true;
}

void UiServer::Impl::stream(httplib::Response& res, std::shared_ptr<void> owner, EventQueue& queue, uint64_t reader,
                            std::string first) {
  struct State {
    std::shared_ptr<void> owner;  // keeps the queue alive
    EventQueue* queue;
    uint64_t reader;
    std::string first;
    std::chrono::steady_clock::time_point last_write = std::chrono::steady_clock::now();
  };
  auto state = std::make_shared<State>(State{std::move(owner), &queue, reader, std::move(first)});
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state](size_t, httplib::DataSink& sink) {
        if (stopping.load()) return false;
        auto write = [&](const std::string& text) {
          state->last_write = std::chrono::steady_clock::now();
          return sink.write(text.data(), text.size());
        };
        if (!state->first.empty()) {
          std::string first = std::exchange(state->first, std::string());
          return write(first);
        }
        EventQueue::Read read = state->queue->read(state->reader, kStreamWait);
        if (!read.text.empty() && !write(read.text)) return false;
        if (read.ended) {
          sink.done();
          return true;
        }
        if (read.text.empty() && std::chrono::steady_clock::now() - state->last_write >= kKeepAlive)
          return write(": keep-alive\n\n");
        return true;
      },
      [this, state](bool) {
        state->queue->unsubscribe(state->reader);
        streams.fetch_sub(1);
      });
}

void UiServer::Impl::graph(const httplib::Request& req, httplib::Response& res) {
  auto session = parseId(req.matches[1]);
  if (!session) return sendJson(res, 404, {{"ok", false}, {"message", "no session '" + req.matches[1].str().substr(0, 40) + "'"}});
  auto feed = feedFor(*session);
  if (!feed) return sendError(res, feed.error());
  if (!takeStreamSlot(res)) return;
  SessionFeed::Subscription subscription = (*feed)->subscribe();
  EventQueue& queue = (*feed)->queue();
  stream(res, *feed, queue, subscription.reader, std::move(subscription.first));
}

void UiServer::Impl::node(httplib::Response& res) {
  std::shared_ptr<NodeFeed> feed;
  {
    std::lock_guard lock(feeds_mutex);
    if (stopping.load()) return sendError(res, unavailable("nodekeeper ui is stopping"));
    if (!node_feed) node_feed = std::make_shared<NodeFeed>(options.socket_path, options.timeout);
    feed = node_feed;
  }
  if (!takeStreamSlot(res)) return;
  NodeFeed::Subscription subscription = feed->subscribe();
  EventQueue& queue = feed->queue();
  stream(res, feed, queue, subscription.reader, std::move(subscription.first));
}

void UiServer::Impl::jobFaults(const httplib::Request& req, httplib::Response& res) {
  const std::string job = req.matches[1];
  if (job.empty() || job.size() > 256 ||
      job.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-@+") != std::string::npos)
    return sendJson(res, 400, {{"ok", false}, {"message", "job id '" + job.substr(0, 40) + "' has characters a job id never has"}});
  if (stopping.load()) return sendError(res, unavailable("nodekeeper ui is stopping"));
  if (!takeStreamSlot(res)) return;
  auto feed = std::make_shared<JobFaultsFeed>(options.socket_path, job);
  uint64_t reader = feed->start();
  EventQueue& queue = feed->queue();
  // The tab's own feed: it goes (its calls cancelled) with the stream.
  stream(res, feed, queue, reader, "");
}

void UiServer::Impl::command(const httplib::Request& req, httplib::Response& res) {
  auto session = parseId(req.matches[1]);
  if (!session) return sendJson(res, 404, {{"ok", false}, {"message", "no session '" + req.matches[1].str().substr(0, 40) + "'"}});
  auto request = CommandRequest::parse(req.body);
  if (!request) return sendError(res, request.error());
  // Opening the feed is the daemon's check that this user may debug it.
  auto feed = feedFor(*session);
  if (!feed) return sendError(res, feed.error());
  if (request->gdb) {
    cli::TasksClient tasks(options.socket_path, options.timeout);
    auto list = tasks.listSessions();
    if (!list) return sendError(res, list.error());
    for (const v1::Session& s : list->sessions()) {
      if (s.session_id() != *session) continue;
      if (!s.live())
        return sendJson(res, 409, {{"ok", false}, {"message", "gdb: the session's program is not running"}});
      GdbOptions gdb;
      gdb.target = s.pid();
      gdb.breakpoint = request->gdb_function;
      return sendJson(res, 200,
                      {{"ok", true},
                       // The program must name gdb its tracer first (Yama), which the
                       // debug console's gdb command arranges.
                       {"message", "in a terminal on the node: 'nodekeeper debug " + std::to_string(*session) +
                                       "', then 'gdb" +
                                       (request->gdb_function.empty() ? std::string() : " " + request->gdb_function) +
                                       "' there; it runs the command line below"},
                       {"latency_ns", 0},
                       {"command", commandLine(GdbProcess::arguments(gdb))}});
    }
    return sendJson(res, 404, {{"ok", false}, {"message", "no task session " + std::to_string(*session)}});
  }
  auto answer = (*feed)->command(request->command);
  if (!answer) return sendError(res, answer.error());
  json body = {{"ok", answer->ack().ok()}, {"message", answer->ack().message()}, {"latency_ns", answer->ack().latency_ns()}};
  if (answer->has_status()) body["status"] = ProtoJson::toJson(answer->status());
  // A refusal is the daemon's answer, not a failed request: the page shows it.
  sendJson(res, 200, body);
}

}  // namespace nk::ui
