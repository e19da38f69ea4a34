#include "unix_socket_server.h"

#include <pthread.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_posix.h>

namespace nk {

namespace {

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

Result<sockaddr_un> socketAddress(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.native().size() >= sizeof address.sun_path)
    return invalidArgument("socket path " + path.string() + " is longer than " +
                           std::to_string(sizeof address.sun_path - 1) + " bytes");
  std::memcpy(address.sun_path, path.c_str(), path.native().size() + 1);
  return address;
}

// True when some process is accepting on `path`.
bool someoneListens(const sockaddr_un& address) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool live = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return live;
}

const char* kindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a socket";
}

// What is at `path` may go only when it is a socket nobody accepts on (left
// by a daemon that died): anything else is someone's file, or another
// daemon, and stays as it is. True when there is such a stale socket.
Result<bool> isStaleSocket(const std::filesystem::path& path, const sockaddr_un& address) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    return unavailable(errnoText("cannot look at " + path.string()));
  }
  if (!S_ISSOCK(st.st_mode))
    return failedPrecondition(path.string() + " is " + kindOf(st.st_mode) +
                              ", not a stale socket; refusing to replace it (remove it or choose another --socket)");
  if (someoneListens(address)) return failedPrecondition("another process is already serving " + path.string());
  return true;
}

Status clearStaleSocket(const std::filesystem::path& path, const sockaddr_un& address) {
  auto stale = isStaleSocket(path, address);
  if (!stale) return stale.error();
  if (*stale && ::unlink(path.c_str()) != 0 && errno != ENOENT)
    return unavailable(errnoText("cannot remove the stale socket " + path.string()));
  return {};
}

}  // namespace

Status UnixSocketServer::checkPath(const std::filesystem::path& path) {
  auto address = socketAddress(path);
  if (!address) return address.error();
  auto stale = isStaleSocket(path, *address);
  if (!stale) return stale.error();
  return {};
}

Result<std::unique_ptr<UnixSocketServer>> UnixSocketServer::start(const std::filesystem::path& path,
                                                                  const std::vector<grpc::Service*>& services) {
  auto address = socketAddress(path);
  if (!address) return address.error();
  std::filesystem::path temp_path = path;
  temp_path += ".binding";
  auto temp_address = socketAddress(temp_path);
  if (!temp_address) return temp_address.error();

  if (Status s = clearStaleSocket(path, *address); !s) return s.error();
  if (Status s = clearStaleSocket(temp_path, *temp_address); !s) return s.error();

  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable(errnoText("socket"));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*temp_address), sizeof *temp_address) != 0) {
    auto error = unavailable(errnoText("cannot bind " + path.string()));
    close(fd);
    return error;
  }
  // Anyone local may connect; what they may do is decided per call.
  chmod(temp_path.c_str(), 0666);
  if (listen(fd, 128) != 0) {
    auto error = unavailable(errnoText("listen on " + path.string()));
    close(fd);
    return error;
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    close(fd);
    return internalError("gRPC server failed to start");
  }
  if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(true);

  if (rename(temp_path.c_str(), path.c_str()) != 0) {
    auto error = unavailable(errnoText("cannot move socket into place at " + path.string()));
    close(fd);
    server->Shutdown();
    return error;
  }
  auto result = std::make_unique<UnixSocketServer>(PrivateTag{}, path, fd, std::move(server));
  if (pipe2(result->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return unavailable(errnoText("pipe"));
  result->accept_thread_ = std::thread([raw = result.get()] { raw->acceptLoop(); });
  return result;
}

UnixSocketServer::UnixSocketServer(PrivateTag, std::filesystem::path path, int listen_fd,
                                   std::unique_ptr<grpc::Server> server)
    : path_(std::move(path)), listen_fd_(listen_fd), server_(std::move(server)) {}

UnixSocketServer::~UnixSocketServer() { shutdown(); }

void UnixSocketServer::acceptLoop() {
  pthread_setname_np(pthread_self(), "nk-accept");
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
  while (!stopping_) {
    int ready = poll(fds, 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (fds[1].revents & POLLIN)) break;
    if (!(fds[0].revents & POLLIN)) continue;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) continue;  // EAGAIN, ECONNABORTED, EMFILE: try the next one
    grpc::AddInsecureChannelFromFd(server_.get(), client);
  }
}

void UnixSocketServer::shutdown() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) {
    char byte = 1;
    (void)!write(wake_pipe_[1], &byte, 1);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  // Streams (telemetry watchers) get a short grace period, then are cancelled.
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  for (int& fd : wake_pipe_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

}  // namespace nk
