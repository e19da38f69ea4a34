#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

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
class UnixSocketServer {
 public:
  // The socket appears at `path` only once the server accepts: it is bound
  // under a temporary name and renamed into place.
  static Result<std::unique_ptr<UnixSocketServer>> start(const std::filesystem::path& path,
                                                         const std::vector<grpc::Service*>& services);
  // Whether start() may serve at `path`: nothing there, or a stale socket
  // (it replaces only that). Checked before the daemon touches anything.
  static Status checkPath(const std::filesystem::path& path);
  ~UnixSocketServer();

  void shutdown();
  const std::filesystem::path& path() const { return path_; }

 private:
  struct PrivateTag {};

 public:
  UnixSocketServer(PrivateTag, std::filesystem::path path, int listen_fd, std::unique_ptr<grpc::Server> server);

 private:
  void acceptLoop();

  std::filesystem::path path_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::unique_ptr<grpc::Server> server_;
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
};

}  // namespace nk
