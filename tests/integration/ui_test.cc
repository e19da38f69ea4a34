// `nodekeeper ui` end to end: the server against a real daemon and a real
// OpenMP program held by a break, driven with httplib's client as the page
// would drive it: the token and Host checks, the session list, the graph's
// SSE stream, break and step 1, and a second user's server that must see
// and steer none of root's sessions.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/daemon_fixture.h"
#include "testlib/run_program.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"

using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace nk::test {
namespace {

constexpr uid_t kOtherUid = 65534;

// A running `nodekeeper ui` and what its URL says.
struct UiProcess {
  BackgroundProgram program;
  int port = 0;
  std::string token;
};

// An SSE stream read on a thread of its own, its events kept in order.
class EventStream {
 public:
  EventStream(int port, std::string path, httplib::Headers headers) {
    reader_ = std::thread([this, port, path = std::move(path), headers = std::move(headers)] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(60, 0);
      auto result = client.Get(
          path.c_str(), headers,
          [this](const httplib::Response& response) {
            std::lock_guard lock(mutex_);
            status_ = response.status;
            return true;
          },
          [this](const char* data, size_t size) {
            std::lock_guard lock(mutex_);
            buffer_.append(data, size);
            for (size_t end; (end = buffer_.find("\n\n")) != std::string::npos;) {
              parse(buffer_.substr(0, end));
              buffer_.erase(0, end + 2);
            }
            changed_.notify_all();
            return !stop_.load();
          });
      std::lock_guard lock(mutex_);
      if (result && status_ == 0) status_ = result->status;
      ended_ = true;
      changed_.notify_all();
    });
  }
  ~EventStream() { close(); }
  void close() {
    stop_.store(true);
    if (reader_.joinable()) reader_.join();
  }

  struct Event {
    std::string name;
    Json data;
  };
  // Waits up to `timeout` for `done` to hold over the events so far.
  bool waitUntil(const std::function<bool(const std::vector<Event>&)>& done, std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return done(events_) || ended_; }) && done(events_);
  }
  int status() {
    std::lock_guard lock(mutex_);
    return status_;
  }
  bool ended() {
    std::lock_guard lock(mutex_);
    return ended_;
  }
  // For a failure's message: the HTTP status, how many events came, and the
  // last of them (its name and data).
  std::string describe() {
    std::lock_guard lock(mutex_);
    std::string text = "stream status " + std::to_string(status_) + (ended_ ? ", ended" : "") + ", " +
                       std::to_string(events_.size()) + " events";
    if (!events_.empty()) text += "; the last: " + events_.back().name + " " + events_.back().data.dump();
    return text;
  }

 private:
  void parse(const std::string& frame) {
    Event event;
    for (size_t at = 0; at < frame.size();) {
      size_t end = frame.find('\n', at);
      std::string line = frame.substr(at, end == std::string::npos ? std::string::npos : end - at);
      at = end == std::string::npos ? frame.size() : end + 1;
      if (line.rfind("event: ", 0) == 0) event.name = line.substr(7);
      if (line.rfind("data: ", 0) == 0) event.data = Json::parse(line.substr(6), nullptr, false);
    }
    if (!event.name.empty()) events_.push_back(std::move(event));
  }

  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string buffer_;
  std::vector<Event> events_;
  int status_ = 0;
  bool ended_ = false;
};

// The tasks as the `graph` events left them: id -> state.
std::map<uint64_t, std::string> taskStates(const std::vector<EventStream::Event>& events) {
  std::map<uint64_t, std::string> states;
  for (const auto& e : events)
    if (e.name == "graph")
      for (const auto& task : e.data["tasks"]) states[task["id"].get<uint64_t>()] = task["state"].get<std::string>();
  return states;
}

size_t finishedTasks(const std::vector<EventStream::Event>& events) {
  size_t finished = 0;
  for (const auto& [id, state] : taskStates(events)) finished += state == "finished";
  return finished;
}

std::optional<Json> lastStatus(const std::vector<EventStream::Event>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it)
    if (it->name == "status") return it->data;
  return std::nullopt;
}

class UiTest : public DaemonFixture {
 protected:
  // A program held at its start with no frontend attached is released
  // after the grace; the server attaches only once a test opens the graph,
  // which on a loaded host can come seconds after the hold (with 4 s between
  // them a 3 s grace fails the test). The daemon's own 30 s, so that no test
  // here races it; none waits for the grace to end.
  UiTest() : DaemonFixture("ui", {"--debug-grace-s", "30"}) {}
  void TearDown() override {
    program_.kill();
    DaemonFixture::TearDown();
  }

  // `nodekeeper ui --port 0` (as `uid`, through setpriv), once it printed
  // its URL.
  std::unique_ptr<UiProcess> startUi(std::optional<uid_t> uid = std::nullopt) {
    auto ui = std::make_unique<UiProcess>();
    std::string cli = cliPath();
    std::vector<std::string> argv;
    if (uid) {
      // Another user may not reach the build tree: a copy beside the socket.
      auto copy = dir_.path() / "nodekeeper";
      if (!std::filesystem::exists(copy)) {
        std::filesystem::copy_file(cli, copy);
        std::filesystem::permissions(copy, std::filesystem::perms(0755));
      }
      cli = copy.string();
      argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(*uid), "--regid=" + std::to_string(*uid),
              "--clear-groups", "--"};
    }
    argv.insert(argv.end(), {cli, "--socket", daemon_.socket().string(), "ui", "--port", "0"});
    std::string tag = uid ? "ui-" + std::to_string(*uid) : "ui-root";
    EXPECT_TRUE(ui->program.start(argv, dir_.path() / (tag + ".out"), dir_.path() / (tag + ".err")));
    std::string url;
    EXPECT_TRUE(waitFor(
        [&] {
          std::string out = ui->program.out();
          if (out.find('\n') == std::string::npos) return false;
          url = out.substr(0, out.find('\n'));
          return true;
        },
        20s))
        << ui->program.err();
    const std::string prefix = "http://127.0.0.1:";
    EXPECT_EQ(url.rfind(prefix, 0), 0u) << url;
    size_t slash = url.find("/?token=");
    EXPECT_NE(slash, std::string::npos) << url;
    if (slash == std::string::npos) return ui;
    ui->port = std::stoi(url.substr(prefix.size(), slash - prefix.size()));
    ui->token = url.substr(slash + 8);
    EXPECT_EQ(ui->token.size(), 64u) << url;
    return ui;
  }

  // A program of `tasks` tasks spinning `micros` each, held at its start.
  void startHeldProgram(long tasks, long micros) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
                                     "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"),
                                     "NODEKEEPER_TASKS=lossless",
                                     "OMP_NUM_THREADS=2",
                                     "NODEKEEPER_BREAK_AT_START=1",
                                     envOr("NK_TASKS_PROGRAM"),
                                     "steady",
                                     std::to_string(tasks),
                                     std::to_string(micros)};
    ASSERT_TRUE(program_.start(argv, dir_.path() / "program.out", dir_.path() / "program.err"));
  }

  static httplib::Headers bearer(const UiProcess& ui) { return {{"Authorization", "Bearer " + ui.token}}; }

  static httplib::Result get(const UiProcess& ui, const std::string& path, httplib::Headers headers) {
    httplib::Client client("127.0.0.1", ui.port);
    client.set_read_timeout(30, 0);
    return client.Get(path.c_str(), headers);
  }
  static httplib::Result post(const UiProcess& ui, const std::string& path, const std::string& body,
                              httplib::Headers headers) {
    httplib::Client client("127.0.0.1", ui.port);
    client.set_read_timeout(30, 0);
    return client.Post(path.c_str(), headers, body, "application/json");
  }
  static Json command(const UiProcess& ui, uint64_t session, const std::string& body, int expect_status = 200) {
    auto res = post(ui, "/api/sessions/" + std::to_string(session) + "/command", body, bearer(ui));
    EXPECT_TRUE(res) << body;
    if (!res) return Json();
    EXPECT_EQ(res->status, expect_status) << body << " -> " << res->body;
    return Json::parse(res->body, nullptr, false);
  }

  // The program's live session, from the root server's list.
  uint64_t sessionOf(const UiProcess& ui) {
    uint64_t found = 0;
    EXPECT_TRUE(waitFor(
        [&] {
          auto res = get(ui, "/api/sessions", bearer(ui));
          if (!res || res->status != 200) return false;
          Json listed = Json::parse(res->body);
          for (const auto& s : listed["sessions"])
            if (s["pid"] == program_.pid() && s["live"] == true) found = s["id"].get<uint64_t>();
          return found != 0;
        },
        20s))
        << program_.err();
    return found;
  }

  BackgroundProgram program_;
};

TEST_F(UiTest, TheTokenAndTheHostAreCheckedBeforeAnything) {
  auto ui = startUi();
  ASSERT_GT(ui->port, 0);
  // No token, a wrong one, a wrong cookie: 403, the page's files included.
  for (const char* path : {"/", "/app.js", "/api/sessions", "/api/node"}) {
    auto res = get(*ui, path, {});
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 403) << path;
  }
  auto wrong = get(*ui, "/?token=" + std::string(64, '0'), {});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 403);
  EXPECT_FALSE(wrong->has_header("Set-Cookie"));
  const std::string cookie_name = "nk_ui_token_" + std::to_string(ui->port);
  auto wrong_cookie = get(*ui, "/api/sessions", {{"Cookie", cookie_name + "=" + std::string(64, '0')}});
  ASSERT_TRUE(wrong_cookie);
  EXPECT_EQ(wrong_cookie->status, 403);
  auto wrong_bearer = get(*ui, "/api/sessions", {{"Authorization", "Bearer " + ui->token.substr(1) + "0"}});
  ASSERT_TRUE(wrong_bearer);
  EXPECT_EQ(wrong_bearer->status, 403);

  // The right token: a cookie and a 303 to /.
  auto first = get(*ui, "/?token=" + ui->token, {});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 303);
  EXPECT_EQ(first->get_header_value("Location"), "/");
  std::string cookie = first->get_header_value("Set-Cookie");
  EXPECT_EQ(cookie, cookie_name + "=" + ui->token + "; HttpOnly; SameSite=Strict; Path=/");
  // Another port's cookie name, with the right token even, is not this server's.
  auto other_port = get(*ui, "/api/sessions", {{"Cookie", "nk_ui_token_1=" + ui->token}});
  ASSERT_TRUE(other_port);
  EXPECT_EQ(other_port->status, 403);
  auto page = get(*ui, "/", {{"Cookie", cookie_name + "=" + ui->token}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  auto script = get(*ui, "/app.js", bearer(*ui));
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  // Nothing else is served, from disk or anywhere.
  for (const char* path : {"/etc/passwd", "/../../etc/passwd", "/web_assets.h", "/index.html/"}) {
    auto res = get(*ui, path, bearer(*ui));
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }

  // The node's and the jobs' JSON.
  auto topology = get(*ui, "/api/topology", bearer(*ui));
  ASSERT_TRUE(topology);
  EXPECT_EQ(topology->status, 200);
  EXPECT_FALSE(Json::parse(topology->body)["cores"].empty()) << topology->body;
  auto jobs = get(*ui, "/api/jobs", bearer(*ui));
  ASSERT_TRUE(jobs);
  EXPECT_EQ(jobs->status, 200);
  EXPECT_TRUE(Json::parse(jobs->body)["jobs"].is_array()) << jobs->body;
  EventStream node(ui->port, "/api/node", bearer(*ui));
  ASSERT_TRUE(node.waitUntil(
      [](const auto& events) {
        bool telemetry = false, apps = false;
        for (const auto& e : events) {
          telemetry |= e.name == "telemetry" && !e.data["cores"].empty() && e.data.contains("node_power_w");
          apps |= e.name == "apps" && e.data["apps"].is_array();
        }
        return telemetry && apps;
      },
      30s));
  node.close();

  // Another Host (a rebound DNS name), even with the token: 403.
  auto rebound = get(*ui, "/api/whoami", {{"Authorization", "Bearer " + ui->token}, {"Host", "evil.example:" + std::to_string(ui->port)}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
  auto localhost = get(*ui, "/api/whoami", {{"Authorization", "Bearer " + ui->token}, {"Host", "localhost:" + std::to_string(ui->port)}});
  ASSERT_TRUE(localhost);
  EXPECT_EQ(localhost->status, 200);
  Json who = Json::parse(localhost->body);
  EXPECT_EQ(who["uid"], 0);
  EXPECT_EQ(who["admin"], true);

  // A post from another origin, or not JSON: refused before it is read.
  httplib::Headers cross = bearer(*ui);
  cross.emplace("Origin", "http://evil.example");
  auto csrf = post(*ui, "/api/sessions/1/command", R"({"action":"break"})", cross);
  ASSERT_TRUE(csrf);
  EXPECT_EQ(csrf->status, 403);
  httplib::Client client("127.0.0.1", ui->port);
  auto form = client.Post("/api/sessions/1/command", bearer(*ui), "action=break", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  auto big = post(*ui, "/api/sessions/1/command", std::string(70 * 1024, ' '), bearer(*ui));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);

  // A port in use: one line, exit 1.
  ProcessResult second =
      runProgram({cliPath(), "--socket", daemon_.socket().string(), "ui", "--port", std::to_string(ui->port)});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("in use"), std::string::npos) << second.err;
  EXPECT_EQ(second.out, "");

  // SIGTERM: exit 0.
  ASSERT_EQ(::kill(ui->program.pid(), SIGTERM), 0);
  EXPECT_EQ(ui->program.wait(20s), 0) << ui->program.err();

  // --json: the URL as {"url": ...}; Ctrl-C: exit 0 too.
  BackgroundProgram json_ui;
  ASSERT_TRUE(json_ui.start({cliPath(), "--json", "--socket", daemon_.socket().string(), "ui"},
                            dir_.path() / "ui-json.out", dir_.path() / "ui-json.err"));
  ASSERT_TRUE(waitFor([&] { return json_ui.out().find('\n') != std::string::npos; }, 20s)) << json_ui.err();
  Json printed = Json::parse(json_ui.out(), nullptr, false);
  ASSERT_TRUE(printed.is_object()) << json_ui.out();
  EXPECT_EQ(printed["url"].get<std::string>().rfind("http://127.0.0.1:", 0), 0u) << json_ui.out();
  ASSERT_EQ(::kill(json_ui.pid(), SIGINT), 0);
  EXPECT_EQ(json_ui.wait(20s), 0) << json_ui.err();
}

TEST_F(UiTest, TheLiveGraphGrowsAndBreakThenStepOneRunsExactlyOneTask) {
  auto ui = startUi();
  ASSERT_GT(ui->port, 0);
  startHeldProgram(40, 20000);
  uint64_t session = sessionOf(*ui);
  ASSERT_NE(session, 0u);

  EventStream graph(ui->port, "/api/sessions/" + std::to_string(session) + "/graph", bearer(*ui));
  // Held at its start: tasks created, both workers parked, none finished.
  ASSERT_TRUE(graph.waitUntil(
      [](const auto& events) {
        auto status = lastStatus(events);
        return taskStates(events).size() >= 40 && status && (*status)["held"] == true &&
               (*status)["parked_workers"] == 2;
      },
      30s))
      << graph.describe() << "\nthe program's stderr:\n" << program_.err();
  EXPECT_EQ(graph.status(), 200);

  Json broke = command(*ui, session, R"({"action":"break"})");
  EXPECT_EQ(broke["ok"], true) << broke.dump();
  EXPECT_TRUE(broke["status"]["held"].get<bool>()) << broke.dump();
  Json stepped = command(*ui, session, R"({"action":"step","tasks":1})");
  EXPECT_EQ(stepped["ok"], true) << stepped.dump();
  EXPECT_GT(stepped["latency_ns"].get<int64_t>(), 0) << stepped.dump();

  // The one task runs; then both workers are parked again, held: nothing
  // else can start, so what has finished now is all the step let through.
  ASSERT_TRUE(graph.waitUntil(
      [](const auto& events) {
        auto status = lastStatus(events);
        return finishedTasks(events) >= 1 && status && (*status)["finished"] == 1 && (*status)["running"] == 0 &&
               (*status)["parked_workers"] == 2 && (*status)["steps_left"] == 0;
      },
      30s));
  Json now = command(*ui, session, R"({"action":"status"})");
  EXPECT_EQ(now["status"]["finished"], 1) << now.dump();
  EXPECT_EQ(now["status"]["running"], 0) << now.dump();
  ASSERT_TRUE(graph.waitUntil([](const auto& events) { return finishedTasks(events) == 1; }, 10s));
  EXPECT_EQ(program_.wait(200ms), -1);  // still held

  // A bad body changes nothing: 400 naming the field.
  Json bad = command(*ui, session, R"({"action":"step","tasks":0})", 400);
  EXPECT_EQ(bad["ok"], false);
  EXPECT_NE(bad["message"].get<std::string>().find("'tasks'"), std::string::npos) << bad.dump();
  Json unknown = command(*ui, session, R"({"action":"explode"})", 400);
  EXPECT_NE(unknown["message"].get<std::string>().find("'explode'"), std::string::npos) << unknown.dump();
  // gdb: the command line to run, not run.
  Json gdb = command(*ui, session, R"({"action":"gdb","function":"fib"})");
  EXPECT_NE(gdb["command"].get<std::string>().find("-p " + std::to_string(program_.pid())), std::string::npos)
      << gdb.dump();

  // Let it go: every task finishes, the runs are there, then the end.
  Json go = command(*ui, session, R"({"action":"continue"})");
  EXPECT_EQ(go["ok"], true) << go.dump();
  ASSERT_TRUE(graph.waitUntil(
      [](const auto& events) { return !events.empty() && events.back().name == "end"; }, 60s));
  EXPECT_EQ(program_.wait(30s), 0) << program_.err();
  ASSERT_TRUE(graph.waitUntil([](const auto& events) { return finishedTasks(events) == 40; }, 10s));
  ASSERT_TRUE(graph.waitUntil(
      [](const auto& events) {
        size_t runs = 0;
        for (const auto& e : events)
          if (e.name == "runs")
            for (const auto& r : e.data["runs"]) runs += r["kind"] == "task";
        return runs >= 40;
      },
      10s));
  // The stream closes after `end`.
  EXPECT_TRUE(waitFor([&] { return graph.ended(); }, 10s));

  // A new tab on the ended session gets it whole, then the end.
  EventStream again(ui->port, "/api/sessions/" + std::to_string(session) + "/graph", bearer(*ui));
  ASSERT_TRUE(again.waitUntil(
      [](const auto& events) { return !events.empty() && events.back().name == "end" && finishedTasks(events) == 40; },
      30s));
}

TEST_F(UiTest, AnotherUsersServerNeitherListsNorOpensNorSteersRootsSession) {
  // The daemon's socket lets any local user connect (its calls then say
  // who may do what).
  struct stat st {};
  ASSERT_EQ(::stat(daemon_.socket().c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 0006, 0006u) << std::oct << st.st_mode;

  auto ui = startUi();
  ASSERT_GT(ui->port, 0);
  startHeldProgram(20, 1000);
  uint64_t session = sessionOf(*ui);
  ASSERT_NE(session, 0u);

  auto other = startUi(kOtherUid);
  ASSERT_GT(other->port, 0) << other->program.err();
  auto whoami = get(*other, "/api/whoami", bearer(*other));
  ASSERT_TRUE(whoami);
  ASSERT_EQ(whoami->status, 200) << whoami->body;
  EXPECT_EQ(Json::parse(whoami->body)["uid"], kOtherUid);
  // Root's token is not the other server's.
  auto borrowed = get(*other, "/api/sessions", bearer(*ui));
  ASSERT_TRUE(borrowed);
  EXPECT_EQ(borrowed->status, 403);

  auto list = get(*other, "/api/sessions", bearer(*other));
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200) << list->body;
  Json listed = Json::parse(list->body);
  for (const auto& s : listed["sessions"]) EXPECT_NE(s["id"], session) << list->body;

  const std::string base = "/api/sessions/" + std::to_string(session);
  auto graph = get(*other, base + "/graph", bearer(*other));
  ASSERT_TRUE(graph);
  EXPECT_TRUE(graph->status == 403 || graph->status == 404) << graph->status << " " << graph->body;
  EXPECT_EQ(Json::parse(graph->body, nullptr, false)["ok"], false) << graph->body;
  for (const char* body : {R"({"action":"continue"})", R"({"action":"status"})", R"({"action":"gdb"})"}) {
    auto steer = post(*other, base + "/command", body, bearer(*other));
    ASSERT_TRUE(steer);
    EXPECT_TRUE(steer->status == 403 || steer->status == 404) << body << ": " << steer->status << " " << steer->body;
  }
  // Still held: the other user's continue let nothing run.
  EXPECT_EQ(program_.wait(200ms), -1);
  Json status = command(*ui, session, R"({"action":"status"})");
  EXPECT_EQ(status["status"]["finished"], 0) << status.dump();
  EXPECT_EQ(command(*ui, session, R"({"action":"continue"})")["ok"], true);
  EXPECT_EQ(program_.wait(30s), 0) << program_.err();
}

TEST_F(UiTest, StreamsAreCappedAndAClosedTabFreesItsSlot) {
  auto ui = startUi();
  ASSERT_GT(ui->port, 0);
  std::vector<std::unique_ptr<EventStream>> tabs;
  for (int i = 0; i < 32; ++i) tabs.push_back(std::make_unique<EventStream>(ui->port, "/api/node", bearer(*ui)));
  for (auto& tab : tabs)
    ASSERT_TRUE(tab->waitUntil([](const auto& events) { return !events.empty(); }, 30s)) << tab->status();
  {
    // Read as a stream: were it served, a plain GET would never return.
    EventStream refused(ui->port, "/api/node", bearer(*ui));
    ASSERT_TRUE(waitFor([&] { return refused.status() != 0; }, 30s));
    EXPECT_EQ(refused.status(), 503);
  }
  // The tabs close: the server notices at its next write and frees the slots.
  tabs.clear();
  EXPECT_TRUE(waitFor(
      [&] {
        EventStream tab(ui->port, "/api/node", bearer(*ui));
        return tab.waitUntil([](const auto& events) { return !events.empty(); }, 5s);
      },
      30s));
}

}  // namespace
}  // namespace nk::test
