#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "cli/ui/event_queue.h"

namespace nk::ui {

// /api/node's events, shared by every tab: one StreamTelemetry stream
// (a `telemetry` event every 500 ms) and ListApps once a second (`apps`),
// started with the first subscriber, as the user's own calls.
class NodeFeed {
 public:
  NodeFeed(std::string socket_path, std::chrono::milliseconds timeout);
  ~NodeFeed();
  NodeFeed(const NodeFeed&) = delete;
  NodeFeed& operator=(const NodeFeed&) = delete;

  struct Subscription {
    std::string first;  // the latest telemetry and apps, if any yet
    uint64_t reader = 0;
  };
  Subscription subscribe();
  EventQueue& queue() { return queue_; }
  void close();

 private:
  void streamTelemetry();
  void pollApps();
  bool sleepUnlessStopping(std::chrono::milliseconds duration);

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
  EventQueue queue_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  bool started_ = false;
  std::string last_telemetry_, last_apps_;  // frames
  std::thread telemetry_, apps_;
};

}  // namespace nk::ui
