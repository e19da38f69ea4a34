// The daemon's /metrics with a real Prometheus (Debian's prometheus 2.42)
// scraping it, and promtool's lint on what it serves.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"

namespace nk {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A port nothing listens on now (the kernel's pick), for Prometheus' own.
int freeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  close(fd);
  return port;
}

// The TCP ports `pid` listens on: its sockets' inodes matched against the
// kernel's table of listening sockets (state 0A).
std::set<int> listeningPorts(pid_t pid) {
  std::set<std::string> inodes;
  std::error_code ec;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::string target = fs::read_symlink(fd.path(), ec).string();
    if (target.starts_with("socket:[")) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::set<int> ports;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the heading
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state == "0A" && inodes.count(inode)) ports.insert(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
    }
  }
  return ports;
}

// The URL the daemon logged, once it has.
std::string metricsUrl(const test::DaemonProcess& daemon) {
  std::smatch match;
  std::string log;
  static const std::regex url(R"(serving Prometheus metrics at (http://127\.0\.0\.1:([0-9]+)/metrics))");
  test::waitFor([&] {
    log = readFile(daemon.stderrPath());
    return std::regex_search(log, match, url);
  }, 20s);
  return match.empty() ? "" : match[1].str();
}

int portOf(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// A real Prometheus scraping `target` every second, its data and config in
// `dir`. SIGKILLed and reaped when this goes (a failed assertion included),
// and by the kernel if the test process itself dies first (PDEATHSIG): a
// crashed test leaves no Prometheus behind.
class Prometheus {
 public:
  Prometheus() = default;
  Prometheus(const Prometheus&) = delete;
  Prometheus& operator=(const Prometheus&) = delete;
  ~Prometheus() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  bool start(const fs::path& dir, const std::string& target) {
    port_ = freeLoopbackPort();
    const fs::path config = dir / "prometheus.yml";
    std::ofstream(config) << "global:\n"
                             "  scrape_interval: 1s\n"
                             "  scrape_timeout: 1s\n"
                             "  evaluation_interval: 1s\n"
                             "scrape_configs:\n"
                             "  - job_name: nodekeeper\n"
                             "    static_configs:\n"
                             "      - targets: ['" + target + "']\n";
    log_ = dir / "prometheus.log";
    std::vector<std::string> argv = {"/usr/bin/prometheus", "--config.file=" + config.string(),
                                     "--storage.tsdb.path=" + (dir / "tsdb").string(),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);  // the parent died before prctl
      int log = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      int null = open("/dev/null", O_RDWR | O_CLOEXEC);
      dup2(null, 0);
      dup2(log, 1);
      dup2(log, 2);
      execv(args[0], args.data());
      _exit(127);
    }
    return pid_ > 0;
  }
  // The instant query's result vector, or null (not up yet, or an error).
  json query(const std::string& promql) {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(2);
    client.set_read_timeout(5);
    auto answer = client.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!answer || answer->status != 200) return nullptr;
    json body = json::parse(answer->body, nullptr, false);
    if (body.is_discarded() || body.value("status", "") != "success") return nullptr;
    return body["data"]["result"];
  }
  std::string log() const { return readFile(log_); }

 private:
  pid_t pid_ = -1;
  int port_ = -1;
  fs::path log_;
};

// A label's value in a query's result, "" if the series has none.
std::string labelOf(const json& series, const std::string& label) {
  const json& metric = series.value("metric", json::object());
  return metric.contains(label) && metric[label].is_string() ? metric[label].get<std::string>() : "";
}

// A sample's value: Prometheus sends it as a string.
double valueOf(const json& series) {
  const json& value = series.value("value", json::array());
  return value.size() == 2 && value[1].is_string() ? std::stod(value[1].get<std::string>()) : -1;
}

TEST(Prometheus, ScrapesPackagePowerThatMatchesTheDaemonsOwnTelemetry) {
  test::TempDir dir("prometheus-test", test::TempDir::Access::kShared);
  test::DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {"--metrics-port", "0"})) << daemon.lastError();
  const std::string url = metricsUrl(daemon);
  ASSERT_FALSE(url.empty()) << readFile(daemon.stderrPath());
  EXPECT_EQ(listeningPorts(daemon.pid()), std::set<int>{portOf(url)});

  Prometheus prometheus;
  ASSERT_TRUE(prometheus.start(dir.path(), "127.0.0.1:" + std::to_string(portOf(url))));
  json scraped;
  const bool answered = test::waitFor([&] {
    scraped = prometheus.query("nodekeeper_package_power_watts");
    return scraped.is_array() && !scraped.empty();
  }, 120s);
  ASSERT_TRUE(answered) << "Prometheus never had nodekeeper_package_power_watts; its log:\n" << prometheus.log();

  // The daemon's own view: the CLI's status (GetTelemetry).
  test::ProcessResult status = test::runProgram({test::cliPath(), "--socket", daemon.socket().string(), "status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json own = json::parse(status.out);
  std::map<std::string, double> own_power;
  for (const json& package : own.value("packages", json::array()))
    own_power[std::to_string(package.value("id", -1))] = package.value("power_w", 0.0);
  std::map<std::string, double> scraped_power;
  for (const json& series : scraped) {
    EXPECT_EQ(labelOf(series, "job"), "nodekeeper");
    EXPECT_NE(labelOf(series, "package"), "") << series.dump();
    scraped_power[labelOf(series, "package")] = valueOf(series);
  }
  ASSERT_FALSE(own_power.empty());
  EXPECT_EQ(scraped_power.size(), own_power.size());
  for (const auto& [package, watts] : own_power) {
    ASSERT_TRUE(scraped_power.count(package)) << "package " << package << " not scraped";
    EXPECT_GT(scraped_power[package], 0) << package;
    EXPECT_GT(watts, 0) << package;
    // Two readings a moment apart of the same emulated package: the same
    // order of magnitude, not the same value.
    EXPECT_LT(scraped_power[package], 10 * watts) << package;
    EXPECT_GT(scraped_power[package], watts / 10) << package;
  }
  // Counters that Prometheus sees as counters: the energy grows.
  json energy = prometheus.query("nodekeeper_package_energy_joules_total");
  ASSERT_TRUE(energy.is_array());
  EXPECT_EQ(energy.size(), own_power.size());
  json up = prometheus.query("up{job=\"nodekeeper\"}");
  ASSERT_TRUE(up.is_array() && up.size() == 1u) << up.dump();
  EXPECT_EQ(valueOf(up[0]), 1);
}

TEST(Prometheus, PromtoolFindsNothingToSayAboutThePage) {
  test::TempDir dir("promtool-test", test::TempDir::Access::kShared);
  test::DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {"--metrics-port", "0"})) << daemon.lastError();
  const std::string url = metricsUrl(daemon);
  ASSERT_FALSE(url.empty()) << readFile(daemon.stderrPath());
  // Some RPCs first, so the page has its histograms.
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(test::runProgram({test::cliPath(), "--socket", daemon.socket().string(), "status"}).exit_code, 0);
  httplib::Client client("127.0.0.1", portOf(url));
  auto page = client.Get("/metrics");
  ASSERT_TRUE(page);
  ASSERT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(page->body.find("nodekeeper_grpc_server_handling_seconds_bucket{grpc_service=\"nodekeeper.v1.NodeService\""),
            std::string::npos);
  const fs::path saved = dir.path() / "metrics.txt";
  std::ofstream(saved) << page->body;
  test::ProcessResult lint = test::runProgram({"/bin/sh", "-c", "exec promtool check metrics < \"$0\"", saved.string()});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "") << "promtool's lint on:\n" << page->body;
}

TEST(Prometheus, OnlyGetOfMetricsIsServed) {
  test::TempDir dir("metrics-refusals", test::TempDir::Access::kShared);
  test::DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path(), {"--metrics-port", "0"})) << daemon.lastError();
  const std::string url = metricsUrl(daemon);
  ASSERT_FALSE(url.empty()) << readFile(daemon.stderrPath());
  httplib::Client client("127.0.0.1", portOf(url));
  auto post = client.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  auto del = client.Delete("/metrics");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  for (const char* path : {"/", "/api/v1/query", "/metrics/x", "/debug/pprof"}) {
    auto other = client.Get(path);
    ASSERT_TRUE(other) << path;
    EXPECT_EQ(other->status, 404) << path;
  }
}

TEST(Prometheus, WithoutTheSettingNothingListens) {
  test::TempDir dir("metrics-off", test::TempDir::Access::kShared);
  test::DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir.path())) << daemon.lastError();
  ASSERT_EQ(test::runProgram({test::cliPath(), "--socket", daemon.socket().string(), "status"}).exit_code, 0);
  EXPECT_EQ(listeningPorts(daemon.pid()), std::set<int>{});
  EXPECT_EQ(readFile(daemon.stderrPath()).find("Prometheus metrics"), std::string::npos);
}

TEST(Prometheus, APortInUseStopsTheStartWithTheSettingNamed) {
  test::TempDir dir("metrics-in-use", test::TempDir::Access::kShared);
  fs::create_directories(dir.path() / "first");
  fs::create_directories(dir.path() / "second");
  test::DaemonProcess first;
  ASSERT_TRUE(first.start(dir.path() / "first", {"--metrics-port", "0"})) << first.lastError();
  const std::string url = metricsUrl(first);
  ASSERT_FALSE(url.empty());
  test::DaemonProcess second;
  EXPECT_FALSE(second.start(dir.path() / "second", {"--metrics-port", std::to_string(portOf(url))}));
  EXPECT_NE(second.lastError().find("--metrics-port (metrics_port): metrics: cannot listen on 127.0.0.1:" +
                                    std::to_string(portOf(url))),
            std::string::npos)
      << second.lastError();
}

}  // namespace
}  // namespace nk
