#include "api/metrics_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "metrics/metrics_writer.h"

namespace nk {

namespace {

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string answer(std::string_view status, std::string_view content_type, std::string_view body, bool with_body,
                   std::string_view extra_headers = {}) {
  std::string out;
  out.reserve(160 + (with_body ? body.size() : 0));
  out.append("HTTP/1.1 ").append(status).append("\r\nContent-Type: ").append(content_type);
  out.append("\r\nContent-Length: ").append(std::to_string(body.size()));
  out.append("\r\nConnection: close\r\n").append(extra_headers).append("\r\n");
  if (with_body) out.append(body);
  return out;
}

std::string plain(std::string_view status, std::string_view line, bool with_body = true,
                  std::string_view extra_headers = {}) {
  return answer(status, "text/plain; charset=utf-8", std::string(line) + "\n", with_body, extra_headers);
}

bool isToken(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

int millisecondsUntil(std::chrono::steady_clock::time_point when, std::chrono::steady_clock::time_point now) {
  if (when <= now) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(when - now).count());
}

}  // namespace

std::string MetricsHttpServer::respond(std::string_view head, const std::function<std::string()>& render) {
  const size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  const size_t first = line.find(' ');
  const size_t second = first == std::string_view::npos ? std::string_view::npos : line.find(' ', first + 1);
  if (second == std::string_view::npos) return plain("400 Bad Request", "not an HTTP request line");
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, second - first - 1);
  std::string_view version = line.substr(second + 1);
  if (!isToken(method) || target.empty() || (version != "HTTP/1.1" && version != "HTTP/1.0"))
    return plain("400 Bad Request", "not an HTTP/1.x request line");
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only)
    return plain("405 Method Not Allowed", "only GET (and HEAD) are served here", true, "Allow: GET, HEAD\r\n");
  std::string_view path = target.substr(0, target.find('?'));
  if (path != "/metrics") return plain("404 Not Found", "only /metrics is served here", !head_only);
  return answer("200 OK", MetricsWriter::kContentType, render(), !head_only);
}

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::start(Options options) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return unavailable(errnoText("metrics: socket"));
  // A port the last run left in TIME_WAIT is taken again at once.
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(options.port);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    auto error = unavailable(errnoText("metrics: cannot listen on 127.0.0.1:" + std::to_string(options.port)));
    close(fd);
    return error;
  }
  socklen_t length = sizeof address;
  if (listen(fd, 16) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    auto error = unavailable(errnoText("metrics: listen on 127.0.0.1:" + std::to_string(options.port)));
    close(fd);
    return error;
  }
  auto server = std::make_unique<MetricsHttpServer>(PrivateTag{}, fd, ntohs(address.sin_port), std::move(options));
  if (pipe2(server->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return unavailable(errnoText("metrics: pipe"));
  server->thread_ = std::thread([raw = server.get()] {
    pthread_setname_np(pthread_self(), "nk-metrics");
    raw->serve();
  });
  return server;
}

MetricsHttpServer::MetricsHttpServer(PrivateTag, int listen_fd, uint16_t port, Options options)
    : listen_fd_(listen_fd), port_(port), options_(std::move(options)) {}

MetricsHttpServer::~MetricsHttpServer() { shutdown(); }

void MetricsHttpServer::shutdown() {
  if (!stopping_.exchange(true) && wake_pipe_[1] >= 0) {
    const char wake = 1;
    [[maybe_unused]] ssize_t n = write(wake_pipe_[1], &wake, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (Connection& c : connections_) close(c.fd);
  connections_.clear();
  for (int* fd : {&listen_fd_, &wake_pipe_[0], &wake_pipe_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void MetricsHttpServer::serve() {
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    const auto now = std::chrono::steady_clock::now();
    // Past their deadline: closed, whatever they were doing.
    std::erase_if(connections_, [&](const Connection& c) {
      if (c.deadline > now) return false;
      close(c.fd);
      return true;
    });
    fds.clear();
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    // While full, new connections wait in the listen backlog.
    const bool accepting = connections_.size() < options_.max_connections;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    int timeout = -1;
    for (const Connection& c : connections_) {
      fds.push_back({c.fd, static_cast<short>(c.answered && !c.draining ? POLLOUT : POLLIN), 0});
      const int until = millisecondsUntil(c.deadline, now);
      timeout = timeout < 0 ? until : std::min(timeout, until);
    }
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) continue;  // woken to stop
    // Connections first: acceptPending() appends to connections_.
    std::vector<Connection> kept;
    kept.reserve(connections_.size());
    for (size_t i = 0; i < connections_.size(); ++i) {
      Connection& c = connections_[i];
      const short events = fds[i + 2].revents;
      bool open = true;
      if (events & (POLLERR | POLLNVAL)) open = false;
      else if (c.draining && (events & (POLLIN | POLLHUP))) open = drain(c);
      else if (!c.answered && (events & (POLLIN | POLLHUP))) open = readFrom(c);
      else if (c.answered && (events & (POLLOUT | POLLHUP))) open = writeTo(c);
      if (open) kept.push_back(std::move(c));
      else close(c.fd);
    }
    connections_ = std::move(kept);
    if (accepting && (fds[1].revents & POLLIN)) acceptPending();
  }
}

void MetricsHttpServer::acceptPending() {
  while (connections_.size() < options_.max_connections) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: the next poll tries again
    connections_.push_back({.fd = fd, .deadline = std::chrono::steady_clock::now() + options_.connection_deadline});
  }
}

bool MetricsHttpServer::readFrom(Connection& c) {
  char buffer[1024];
  while (true) {
    const size_t room = options_.max_request_bytes + 1 - std::min(c.in.size(), options_.max_request_bytes + 1);
    if (room == 0) break;
    ssize_t n = recv(c.fd, buffer, std::min(sizeof buffer, room), 0);
    if (n > 0) {
      c.in.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;  // gone before a whole request
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    return false;
  }
  const size_t end = c.in.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (c.in.size() <= options_.max_request_bytes) return true;  // more to come
    c.out = plain("431 Request Header Fields Too Large",
                  "a request here is at most " + std::to_string(options_.max_request_bytes) + " bytes");
  } else {
    c.out = respond(std::string_view(c.in).substr(0, end), options_.render);
  }
  c.in.clear();
  c.in.shrink_to_fit();
  c.answered = true;
  return writeTo(c);
}

bool MetricsHttpServer::writeTo(Connection& c) {
  while (c.sent < c.out.size()) {
    ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n > 0) {
      c.sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
  ::shutdown(c.fd, SHUT_WR);
  c.out.clear();
  c.out.shrink_to_fit();
  c.draining = true;
  return drain(c);
}

bool MetricsHttpServer::drain(Connection& c) {
  char buffer[1024];
  // A few reads a wake-up: a client that sends without end must not keep
  // this thread from the others (its deadline ends it).
  for (int reads = 0; reads < 16; ++reads) {
    ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
    if (n > 0) continue;  // discarded
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

}  // namespace nk
