#include "unix_socket_server.h"

#include <pthread.h>

#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
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
                                                                  const std::vector<grpc::Service*>& services,
                                                                  Options options) {
  auto address = socketAddress(path);
  if (!address) return address.error();
  std::filesystem::path temp_path = path;
  temp_path += ".binding";
  auto temp_address = socketAddress(temp_path);
  if (!temp_address) return temp_address.error();

  if (Status s = clearStaleSocket(path, *address); !s) return s.error();
  if (Status s = clearStaleSocket(temp_path, *temp_address); !s) return s.error();

  // Non-blocking: the accept loop takes what is pending until EAGAIN.
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_bytes));
  for (grpc::Service* service : services) builder.RegisterService(service);
  if (!options.interceptors.empty()) builder.experimental().SetInterceptorCreators(std::move(options.interceptors));
  auto poller = std::make_unique<StandingPoller>(builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    close(fd);
    return internalError("gRPC server failed to start");
  }
  if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(true);
  poller->start();

  if (rename(temp_path.c_str(), path.c_str()) != 0) {
    auto error = unavailable(errnoText("cannot move socket into place at " + path.string()));
    close(fd);
    server->Shutdown();
    poller.reset();
    return error;
  }
  auto result = std::make_unique<UnixSocketServer>(PrivateTag{}, path, fd, std::move(server), std::move(poller),
                                                   std::move(options));
  if (struct stat bound {}; ::lstat(path.c_str(), &bound) == 0) {
    result->socket_dev_ = bound.st_dev;
    result->socket_ino_ = bound.st_ino;
  }
  if (pipe2(result->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return unavailable(errnoText("pipe"));
  result->reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (result->reserve_fd_ < 0) return unavailable(errnoText("cannot open /dev/null"));
  result->accept_thread_ = std::thread([raw = result.get()] { raw->acceptLoop(); });
  return result;
}

UnixSocketServer::UnixSocketServer(PrivateTag, std::filesystem::path path, int listen_fd,
                                   std::unique_ptr<grpc::Server> server, std::unique_ptr<StandingPoller> poller,
                                   Options options)
    : path_(std::move(path)),
      listen_fd_(listen_fd),
      options_(std::move(options)),
      limits_(options_.limits),
      server_(std::move(server)),
      poller_(std::move(poller)) {}

UnixSocketServer::~UnixSocketServer() { shutdown(); }

namespace {

using namespace std::chrono_literals;

constexpr auto kFirstBackoff = 100ms;
constexpr auto kLongestBackoff = 2s;
// How often connections are checked for gRPC having closed them, and how
// soon after their peer hung up.
constexpr auto kSweepPeriod = 1s;
constexpr auto kHungUpSweepPeriod = 50ms;
// Accepts per wake-up, so that hang-ups and the wake pipe are heard between.
constexpr int kAcceptBatch = 64;

bool outOfDescriptorsError(int error) { return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM; }

int millisecondsUntil(std::chrono::steady_clock::time_point when, std::chrono::steady_clock::time_point now) {
  if (when <= now) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(when - now).count());
}

// Descriptors this process has open; needs one free itself.
long openDescriptors() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  long count = 0;
  while (const dirent* entry = ::readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  ::closedir(dir);
  return count - 1;  // the directory's own
}

}  // namespace

void UnixSocketServer::acceptLoop() {
  pthread_setname_np(pthread_self(), "nk-accept");
  std::vector<pollfd> fds;
  std::vector<size_t> watched;  // connections_ index of fds[2 + i]
  auto last_sweep = Clock::now();
  while (!stopping_) {
    auto now = Clock::now();
    const bool backing_off = now < backoff_until_;
    fds.clear();
    watched.clear();
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    // A negative descriptor is skipped by poll: the listening socket stays
    // readable while descriptors are short, and polling it would spin.
    fds.push_back({backing_off ? -1 : listen_fd_, POLLIN, 0});
    bool any_hung_up = false;
    for (size_t i = 0; i < connections_.size(); ++i) {
      if (connections_[i].peer_gone) {
        any_hung_up = true;
        continue;
      }
      fds.push_back({connections_[i].watch_fd, POLLRDHUP, 0});
      watched.push_back(i);
    }
    int timeout_ms = -1;
    if (!connections_.empty())
      timeout_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        any_hung_up ? kHungUpSweepPeriod : kSweepPeriod)
                                        .count());
    if (backing_off) {
      int until_resume = millisecondsUntil(backoff_until_, now);
      timeout_ms = timeout_ms < 0 ? until_resume : std::min(timeout_ms, until_resume);
    }
    int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || (fds[0].revents & POLLIN)) break;
    for (size_t k = 0; k < watched.size(); ++k)
      if (fds[2 + k].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) connections_[watched[k]].peer_gone = true;
    now = Clock::now();
    if (any_hung_up || now - last_sweep >= kSweepPeriod) {
      forgetClosedConnections();
      last_sweep = now;
    }
    if (fds[1].revents & POLLIN) acceptPending(now);
  }
}

void UnixSocketServer::acceptPending(Clock::time_point now) {
  for (int i = 0; i < kAcceptBatch && !stopping_; ++i) {
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client >= 0) {
      admit(client, now);
      if (now < backoff_until_) return;  // admitting it ran out of descriptors
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
    if (outOfDescriptorsError(errno)) outOfDescriptors(errno, now);
    return;  // EAGAIN: nothing more pending
  }
}

void UnixSocketServer::admit(int client, Clock::time_point now) {
  ucred peer{};
  socklen_t length = sizeof peer;
  if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
    close(client);
    return;
  }
  auto admission = limits_.admit(peer.uid, now);
  if (!admission.admitted) {
    close(client);
    if (admission.log_refusal) {
      const auto& settings = limits_.settings();
      std::string why =
          admission.over_total
              ? "the daemon has " + std::to_string(limits_.open()) + " connections open, the most it takes (connections_total " +
                    std::to_string(settings.total) + ")"
              : "it has " + std::to_string(limits_.openBy(peer.uid)) + " open, the most one user may have (connections_per_user " +
                    std::to_string(settings.per_user) + ")";
      options_.log_warning("refusing Unix socket connections from uid " + std::to_string(peer.uid) + ": " + why + "; " +
                           std::to_string(admission.refusals_since_last_log) +
                           " refused since this was last logged (logged at most once a minute per user)");
    }
    return;
  }
  int watch = fcntl(client, F_DUPFD_CLOEXEC, 0);
  struct stat st {};
  if (watch < 0 || fstat(watch, &st) != 0) {
    int error = errno;
    if (watch >= 0) close(watch);
    close(client);
    limits_.release(peer.uid);
    if (outOfDescriptorsError(error)) outOfDescriptors(error, now);
    return;
  }
  connections_.push_back({peer.uid, client, watch, st.st_dev, st.st_ino, false});
  if (exhaustion_said_) {
    options_.log_info("file descriptors available again: accepting connections");
    exhaustion_said_ = false;
  }
  backoff_ = {};
  if (reserve_fd_ < 0) reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  grpc::AddInsecureChannelFromFd(server_.get(), client);
}

void UnixSocketServer::forgetClosedConnections() {
  auto still_handed = [](const Connection& connection) {
    struct stat st {};
    return fstat(connection.handed_fd, &st) == 0 && st.st_dev == connection.dev && st.st_ino == connection.ino;
  };
  std::erase_if(connections_, [&](const Connection& connection) {
    if (still_handed(connection)) return false;
    close(connection.watch_fd);
    limits_.release(connection.uid);
    return true;
  });
}

void UnixSocketServer::outOfDescriptors(int error, Clock::time_point now) {
  backoff_ = backoff_ == Clock::duration{} ? Clock::duration(kFirstBackoff)
                                           : std::min<Clock::duration>(backoff_ * 2, kLongestBackoff);
  backoff_until_ = now + backoff_;
  const bool say = !exhaustion_said_ && (!ever_exhausted_ || now - exhaustion_said_at_ >= std::chrono::minutes(1));
  long open_count = -1;
  if (reserve_fd_ >= 0) {
    close(reserve_fd_);
    reserve_fd_ = -1;
    if (say) open_count = openDescriptors();
    // The client at the head of the backlog hears "no" rather than waiting.
    int refused = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (refused >= 0) close(refused);
    reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (!say) return;
  exhaustion_said_ = true;
  ever_exhausted_ = true;
  exhaustion_said_at_ = now;
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  std::string open_text = open_count >= 0 ? std::to_string(open_count) : std::string("?");
  options_.log_warning("out of file descriptors (" + std::string(std::strerror(error)) + "): " + open_text +
                       " open, RLIMIT_NOFILE " + std::to_string(limit.rlim_cur) + ", " +
                       std::to_string(connections_.size()) +
                       " of them client connections; refusing new connections for a while (said at most once a minute)");
}

void UnixSocketServer::closeWatchedConnections() {
  for (const Connection& connection : connections_) close(connection.watch_fd);
  connections_.clear();
}

void UnixSocketServer::shutdown() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) {
    char byte = 1;
    (void)!write(wake_pipe_[1], &byte, 1);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (struct stat now {}; ::lstat(path_.c_str(), &now) == 0 && S_ISSOCK(now.st_mode) && now.st_dev == socket_dev_ &&
                          now.st_ino == socket_ino_)
    ::unlink(path_.c_str());
  // Streams (telemetry watchers) get a short grace period, then are cancelled.
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  poller_.reset();
  // Only now: gRPC has closed its descriptors, and ours held the sockets open.
  closeWatchedConnections();
  if (reserve_fd_ >= 0) close(reserve_fd_);
  reserve_fd_ = -1;
  for (int& fd : wake_pipe_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

}  // namespace nk
