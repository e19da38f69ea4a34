#include "cli/ui/node_feed.h"

#include "cli/apps_client.h"
#include "cli/node_client.h"
#include "cli/ui/node_json.h"

namespace nk::ui {

NodeFeed::NodeFeed(std::string socket_path, std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)), timeout_(timeout) {}

NodeFeed::~NodeFeed() { close(); }

void NodeFeed::close() {
  stopping_.store(true);
  if (telemetry_.joinable()) telemetry_.join();
  if (apps_.joinable()) apps_.join();
  queue_.close();
}

NodeFeed::Subscription NodeFeed::subscribe() {
  std::lock_guard lock(mutex_);
  if (!started_) {
    started_ = true;
    telemetry_ = std::thread([this] { streamTelemetry(); });
    apps_ = std::thread([this] { pollApps(); });
  }
  return {last_telemetry_ + last_apps_, queue_.subscribe()};
}

bool NodeFeed::sleepUnlessStopping(std::chrono::milliseconds duration) {
  auto until = std::chrono::steady_clock::now() + duration;
  while (!stopping_.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !stopping_.load();
}

void NodeFeed::streamTelemetry() {
  cli::NodeClient client(socket_path_, timeout_);
  while (!stopping_.load()) {
    // The stream checks the callback each half second: it ends soon after
    // close() asks.
    Status streamed = client.streamTelemetry(500, [&](const nodekeeper::v1::TelemetrySnapshot& snapshot) {
      std::string frame = EventQueue::frame("telemetry", NodeJson::telemetry(snapshot));
      std::lock_guard lock(mutex_);
      last_telemetry_ = frame;
      queue_.push(std::move(frame));
      return !stopping_.load();
    }, nullptr);
    if (!streamed) {
      std::lock_guard lock(mutex_);
      queue_.push("news", {{"ok", false}, {"message", "telemetry: " + streamed.error().message}});
    }
    // The daemon restarting, or gone for now: try again.
    if (!sleepUnlessStopping(std::chrono::seconds(2))) return;
  }
}

void NodeFeed::pollApps() {
  cli::AppsClient client(socket_path_, timeout_);
  while (!stopping_.load()) {
    auto apps = client.listApps();
    std::string frame = EventQueue::frame(
        "apps", apps ? NodeJson::apps(*apps) : nlohmann::json{{"apps", nlohmann::json::array()}});
    {
      std::lock_guard lock(mutex_);
      last_apps_ = frame;
      queue_.push(std::move(frame));
    }
    if (!sleepUnlessStopping(std::chrono::seconds(1))) return;
  }
}

}  // namespace nk::ui
