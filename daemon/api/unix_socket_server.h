#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/support/server_interceptor.h>

#include "api/connection_limits.h"
#include "api/standing_poller.h"
#include "base/result.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace nk {

// A gRPC server on a Unix socket that the daemon accepts on itself and hands
// to gRPC connection by connection (AddInsecureChannelFromFd), because gRPC
// C++ does not reveal peer credentials otherwise. Serves health checking and
// reflection as well as the given services.
//
// Connections are counted per user (ConnectionLimits); one over a limit is
// closed before gRPC sees it. Out of descriptors, the listening socket is
// left alone for a growing pause instead of being polled in a spin.
class UnixSocketServer {
 public:
  struct Options {
    ConnectionLimits::Settings limits;
    // A larger message from a client ends its call with RESOURCE_EXHAUSTED.
    uint32_t max_message_bytes = 4u << 20;
    std::function<void(const std::string&)> log_warning = [](const std::string&) {};
    std::function<void(const std::string&)> log_info = [](const std::string&) {};
    // Run on every call (RpcLatencyInterceptor).
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  };

  // The socket appears at `path` only once the server accepts: it is bound
  // under a temporary name and renamed into place.
  static Result<std::unique_ptr<UnixSocketServer>> start(const std::filesystem::path& path,
                                                         const std::vector<grpc::Service*>& services,
                                                         Options options);
  // Whether start() may serve at `path`: nothing there, or a stale socket
  // (it replaces only that). Checked before the daemon touches anything.
  static Status checkPath(const std::filesystem::path& path);
  ~UnixSocketServer();

  void shutdown();
  const std::filesystem::path& path() const { return path_; }

 private:
  struct PrivateTag {};

 public:
  UnixSocketServer(PrivateTag, std::filesystem::path path, int listen_fd, std::unique_ptr<grpc::Server> server,
                   std::unique_ptr<StandingPoller> poller, Options options);

 private:
  using Clock = ConnectionLimits::Clock;

  // A connection handed to gRPC. gRPC owns `handed_fd` and says nothing when
  // it closes it, so we keep a duplicate: it reports the peer hanging up
  // (POLLRDHUP) and, by its inode, tells whether `handed_fd` is still that
  // socket (the duplicate keeps the inode from being reused meanwhile).
  struct Connection {
    uid_t uid = 0;
    int handed_fd = -1;
    int watch_fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    bool peer_gone = false;
  };

  void acceptLoop();
  void acceptPending(Clock::time_point now);
  void admit(int client, Clock::time_point now);
  // Closes the duplicates of connections gRPC has let go of.
  void forgetClosedConnections();
  void outOfDescriptors(int error, Clock::time_point now);
  void closeWatchedConnections();

  std::filesystem::path path_;
  int listen_fd_ = -1;
  // The socket file this server made: shutdown removes the path only while
  // it is still that file, not whatever has been put there since.
  dev_t socket_dev_ = 0;
  ino_t socket_ino_ = 0;
  int wake_pipe_[2] = {-1, -1};
  // Kept open to be given up when descriptors run out, so that a pending
  // connection can still be accepted and closed (its client hears "no"
  // instead of hanging in the backlog).
  int reserve_fd_ = -1;
  Options options_;
  ConnectionLimits limits_;
  std::vector<Connection> connections_;
  Clock::duration backoff_{};
  Clock::time_point backoff_until_{};
  // Running out is said at most once a minute: under a steady flood the
  // daemon runs out and recovers again and again.
  bool exhaustion_said_ = false;  // and not yet the recovery
  bool ever_exhausted_ = false;
  Clock::time_point exhaustion_said_at_{};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<StandingPoller> poller_;  // after server_'s Shutdown
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
};

}  // namespace nk
