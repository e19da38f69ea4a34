#include "api/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace nk {
namespace {

using namespace std::chrono_literals;

std::string page() { return "# HELP m M.\n# TYPE m gauge\nm 1\n"; }

TEST(MetricsHttpServerRespond, GetMetricsIsThePageInTheExpositionFormat) {
  std::string out = MetricsHttpServer::respond("GET /metrics HTTP/1.1\r\nHost: x", page);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 200 OK\r\n")) << out;
  EXPECT_NE(out.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Content-Length: " + std::to_string(page().size()) + "\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("\r\n\r\n" + page())) << out;
  EXPECT_TRUE(MetricsHttpServer::respond("GET /metrics?name[]=up HTTP/1.0", page).starts_with("HTTP/1.1 200 OK"));
}

TEST(MetricsHttpServerRespond, HeadHasTheHeadersAndNoBody) {
  std::string out = MetricsHttpServer::respond("HEAD /metrics HTTP/1.1", page);
  EXPECT_TRUE(out.starts_with("HTTP/1.1 200 OK\r\n")) << out;
  EXPECT_TRUE(out.ends_with("\r\n\r\n")) << out;
}

TEST(MetricsHttpServerRespond, OtherMethodsPathsAndNonsenseAreRefused) {
  bool rendered = false;
  auto render = [&] {
    rendered = true;
    return page();
  };
  std::string post = MetricsHttpServer::respond("POST /metrics HTTP/1.1", render);
  EXPECT_TRUE(post.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
  for (const char* method : {"PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH"})
    EXPECT_TRUE(MetricsHttpServer::respond(std::string(method) + " /metrics HTTP/1.1", render)
                    .starts_with("HTTP/1.1 405"))
        << method;
  for (const char* path : {"/", "/metrics/", "/metricsx", "/../metrics", "/api/v1/query", "*"})
    EXPECT_TRUE(MetricsHttpServer::respond(std::string("GET ") + path + " HTTP/1.1", render)
                    .starts_with("HTTP/1.1 404 Not Found"))
        << path;
  for (const char* nonsense : {"", "GET", "GET /metrics", "get /metrics HTTP/1.1", "GET /metrics HTTP/2.0",
                               "GET  /metrics HTTP/1.1", "\x16\x03\x01 TLS hello"})
    EXPECT_TRUE(MetricsHttpServer::respond(nonsense, render).starts_with("HTTP/1.1 400 Bad Request")) << nonsense;
  EXPECT_FALSE(rendered);
}

// A client of the real server on 127.0.0.1.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }
  void send(const std::string& bytes) { ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size())); }
  // Everything until the server closes, or what came by `timeout`.
  std::string readAll(std::chrono::milliseconds timeout = 20s) {
    std::string out;
    char buffer[4096];
    closed_ = false;
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return out;
      ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = true;
        return out;
      }
      out.append(buffer, static_cast<size_t>(n));
    }
  }
  // Whether the last readAll ended with the server closing (not a timeout).
  bool closedByServer() const { return closed_; }
  // Neither data nor a close waiting now.
  bool quietNow() const {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

std::unique_ptr<MetricsHttpServer> startServer(MetricsHttpServer::Options options) {
  auto server = MetricsHttpServer::start(std::move(options));
  EXPECT_TRUE(server.ok()) << server.error().message;
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(MetricsHttpServer, ServesThePageOnAFreeLoopbackPort) {
  std::atomic<int> renders{0};
  auto server = startServer({.render = [&] {
    ++renders;
    return page();
  }});
  ASSERT_TRUE(server);
  EXPECT_NE(server->port(), 0);
  Client client(server->port());
  ASSERT_TRUE(client.connected());
  client.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n");
  std::string answer = client.readAll();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK")) << answer;
  EXPECT_TRUE(answer.ends_with(page())) << answer;
  EXPECT_EQ(renders.load(), 1);
}

TEST(MetricsHttpServer, SilentClientsHoldUpNoOneAndAreClosedAtTheirDeadline) {
  auto server = startServer({.max_connections = 4, .connection_deadline = 10s, .render = page});
  ASSERT_TRUE(server);
  // Two clients that connect and say nothing, one that sends half a head.
  Client silent1(server->port()), silent2(server->port()), silent3(server->port());
  silent3.send("GET /metr");
  Client scraper(server->port());
  scraper.send("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(scraper.readAll().starts_with("HTTP/1.1 200 OK"));
  EXPECT_TRUE(scraper.closedByServer());
  // The scraper was answered while the others still hold their connections
  // (a server that waited on them would answer it only after their deadline).
  EXPECT_TRUE(silent1.quietNow());
  EXPECT_TRUE(silent3.quietNow());
  // Past their deadline the server closes them, with no answer.
  EXPECT_EQ(silent1.readAll(), "");
  EXPECT_TRUE(silent1.closedByServer());
  EXPECT_EQ(silent3.readAll(), "");
  EXPECT_TRUE(silent3.closedByServer());
}

TEST(MetricsHttpServer, MoreClientsThanItsBoundWaitTheirTurn) {
  auto server = startServer({.max_connections = 1, .connection_deadline = 1000ms, .render = page});
  ASSERT_TRUE(server);
  Client silent(server->port());
  Client scraper(server->port());  // in the backlog until the silent one's deadline
  scraper.send("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(scraper.readAll().starts_with("HTTP/1.1 200 OK"));
}

TEST(MetricsHttpServer, AnOversizedRequestIsRefused) {
  auto server = startServer({.max_request_bytes = 256, .render = page});
  ASSERT_TRUE(server);
  Client client(server->port());
  client.send("GET /metrics HTTP/1.1\r\nX-Filler: " + std::string(1000, 'a') + "\r\n\r\n");
  std::string answer = client.readAll();
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large")) << answer;
}

TEST(MetricsHttpServer, APortInUseIsAClearError) {
  auto first = startServer({.render = page});
  ASSERT_TRUE(first);
  auto second = MetricsHttpServer::start({.port = first->port(), .render = page});
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("cannot listen on 127.0.0.1:" + std::to_string(first->port())),
            std::string::npos)
      << second.error().message;
  EXPECT_NE(second.error().message.find("Address already in use"), std::string::npos) << second.error().message;
}

TEST(MetricsHttpServer, ShutdownWithClientsConnectedEndsAtOnce) {
  auto server = startServer({.render = page});
  ASSERT_TRUE(server);
  Client silent(server->port());
  server->shutdown();
  EXPECT_EQ(silent.readAll(), "");
  EXPECT_TRUE(silent.closedByServer());
}

}  // namespace
}  // namespace nk
