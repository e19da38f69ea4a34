#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"

namespace nk {

// Serves GET /metrics over HTTP/1.x on 127.0.0.1 only, on one thread of its
// own: a scraper that is slow, or a local user who opens connections and
// says nothing, holds up this thread's connections at the most, never the
// gRPC server or the daemon's loops. Everything is bounded: connections at
// once, the request's size, and each connection's life. One request per
// connection (Connection: close): a scrape every few seconds gains nothing
// from keep-alive, and the server keeps no idle connections.
class MetricsHttpServer {
 public:
  struct Options {
    uint16_t port = 0;  // 0: any free port (port() tells which)
    size_t max_connections = 16;
    // From accept to the last byte of the answer; a connection still open
    // then is closed.
    std::chrono::milliseconds connection_deadline{10000};
    size_t max_request_bytes = 4096;
    // The page, made when a GET /metrics asks for it.
    std::function<std::string()> render;
  };

  static Result<std::unique_ptr<MetricsHttpServer>> start(Options options);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  uint16_t port() const { return port_; }
  void shutdown();

  // The whole answer to a request's head (up to its blank line): 200 with
  // the page for GET (or HEAD) /metrics, 404 for another path, 405 for
  // another method, 400 for what is not HTTP/1.x.
  static std::string respond(std::string_view head, const std::function<std::string()>& render);

 private:
  struct PrivateTag {};

 public:
  MetricsHttpServer(PrivateTag, int listen_fd, uint16_t port, Options options);

 private:
  struct Connection {
    int fd = -1;
    std::chrono::steady_clock::time_point deadline;
    std::string in;
    std::string out;
    size_t sent = 0;
    bool answered = false;  // `out` holds the answer
    // All sent and our side shut: read until the client closes, since
    // closing with its bytes unread would reset the connection and could
    // lose the answer in its buffer.
    bool draining = false;
  };

  void serve();
  void acceptPending();
  // Reads what the client sent, and answers once its head is complete;
  // false when the connection is done with.
  bool readFrom(Connection& c);
  bool writeTo(Connection& c);
  bool drain(Connection& c);

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  int wake_pipe_[2] = {-1, -1};
  Options options_;
  std::vector<Connection> connections_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace nk
