// Peers with identity and privacy (issue 18, item 4): real nodekeeperd as
// emulated nodes n1..n4 on loopback addresses of their own, talking over
// mutual TLS with certificates that tools/make-peer-certs makes in the
// test's directory. A fault tree over TLS localises a killed node; a peer
// with a certificate of another CA, with none, or in clear is refused in
// the handshake and changes nothing; a daemon in clear serves no health or
// reflection on TCP and says its traffic is in clear.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "protos/health.grpc.pb.h"
#include "protos/reflection.grpc.pb.h"
#include "base/clock.h"
#include "testlib/daemon_cluster.h"
#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/mpi_job.h"
#include "testlib/processes.h"
#include "testlib/run_program.h"
#include "testlib/tcp_address.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace nk::test {
namespace {

constexpr const char* kJob = "tlsjob";
constexpr const char* kDown = "response probe: 0 of 3 attempts answered";

class PeerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The site's CA and a certificate per node, and a second CA with
    // certificates for the same names and addresses: a stranger's.
    for (const auto& [dir, ca] : {std::pair{pki(), "site CA"}, std::pair{roguePki(), "rogue CA"}}) {
      std::vector<std::string> argv = {envOr("NK_MAKE_PEER_CERTS"), "--dir", dir.string(), "--ca-name", ca};
      for (int i = 1; i <= 4; ++i) argv.push_back(nodeName(i) + "=" + ip(i));
      ProcessResult made = runProgram(argv, std::nullopt, 60s);
      ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
    }
  }

  void TearDown() override {
    job_.kill();
    for (pid_t p : rank_pids_)
      if (p > 0 && cmdlineOf(p).find("mpi_check") != std::string::npos) ::kill(p, SIGKILL);
    cluster_.killAll();
  }

  static bool haveMpi() { return !envOr("NK_MPI_CHECK").empty() && !envOr("NK_PMPI_LIB").empty(); }
  std::filesystem::path pki() const { return dir_ / "pki"; }
  std::filesystem::path roguePki() const { return dir_ / "rogue"; }
  std::string ip(int i) const { return cluster_.ip(i); }
  DaemonProcess& node(int i) { return cluster_.node(i); }

  // This node's TLS flags: its certificate and key from `site`, the site's CA.
  std::vector<std::string> tlsFlags(int i, const std::filesystem::path& site) const {
    return {"--peer-cert", (site / (nodeName(i) + ".pem")).string(), "--peer-key",
            (site / (nodeName(i) + ".key")).string(), "--peer-ca", (site / "ca.pem").string()};
  }

  void startCluster(int count, const DaemonCluster::Flags& flags) { ASSERT_EQ(cluster_.start(count, flags), ""); }

  std::vector<std::string> mpirun(const std::vector<std::string>& program) const {
    std::vector<std::string> command = {envOr("NK_MPI_CHECK")};
    command.insert(command.end(), program.begin(), program.end());
    return cluster_.mpirun({std::string("NODEKEEPER_JOB_ID=") + kJob}, command);
  }

  std::string treeLine() const {
    return "job " + std::string(kJob) + ": fault tree of " + std::to_string(cluster_.size()) + " nodes";
  }

  Json cliJson(int i, std::vector<std::string> args) {
    std::vector<std::string> argv = {cliPath(), "--socket", node(i).socket().string(), "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult r = runProgram(argv, std::nullopt, 15s);
    EXPECT_EQ(r.exit_code, 0) << "nodekeeper " << args[0] << " at " << nodeName(i) << ": " << r.out << r.err;
    if (r.exit_code != 0) return Json();
    Json parsed = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << r.out;
    return parsed;
  }

  Json faults(int i) {
    Json list = cliJson(i, {"faults"});
    return list.is_array() ? list : Json::array();
  }

  std::optional<Json> waitForFault(int i, const std::string& about, std::chrono::milliseconds timeout = 15000ms) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      for (const auto& f : faults(i))
        if (f.value("node", "") == about) return f;
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(100ms);
    }
  }

  std::string logs() const { return cluster_.logs(); }

  // A channel to n<i>'s TCP port over TLS: trusting `ca`, presenting the
  // certificate and key of `as` (none when empty).
  std::shared_ptr<grpc::Channel> tlsChannel(int i, const std::filesystem::path& ca, const std::filesystem::path& cert,
                                            const std::filesystem::path& key) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = readFile(ca);
    if (!cert.empty()) {
      options.pem_cert_chain = readFile(cert);
      options.pem_private_key = readFile(key);
    }
    return grpc::CreateChannel(cluster_.address(i), grpc::SslCredentials(options));
  }
  std::shared_ptr<grpc::Channel> siteChannel(int i, int as) {
    return tlsChannel(i, pki() / "ca.pem", pki() / (nodeName(as) + ".pem"), pki() / (nodeName(as) + ".key"));
  }
  std::shared_ptr<grpc::Channel> plainChannel(int i) {
    return grpc::CreateChannel(cluster_.address(i), grpc::InsecureChannelCredentials());
  }
  // A channel as n<as> with a connection of its own (a new handshake), and
  // the certificate n<i> presented in it; empty if the call failed.
  std::string certificateServedBy(int i, int as) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = readFile(pki() / "ca.pem");
    options.pem_cert_chain = readFile(pki() / (nodeName(as) + ".pem"));
    options.pem_private_key = readFile(pki() / (nodeName(as) + ".key"));
    grpc::ChannelArguments own_connection;
    own_connection.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    auto channel = grpc::CreateCustomChannel(cluster_.address(i), grpc::SslCredentials(options), own_connection);
    auto stub = v1::FaultTreeService::NewStub(channel);
    v1::ProbeRequest request;
    request.set_job_id(kJob);
    request.set_node(nodeName(i));
    v1::ProbeResponse reply;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    if (!stub->ResponseProbe(&context, request, &reply).ok()) return "";
    auto certs = context.auth_context()->FindPropertyValues("x509_pem_cert");
    return certs.empty() ? "" : std::string(certs.front().data(), certs.front().size());
  }
  void sighup(int i) { ASSERT_EQ(::kill(node(i).pid(), SIGHUP), 0); }
  // Waits for `line` in n<i>'s log after its first `after` bytes.
  bool logSays(int i, const std::string& line, size_t after, std::chrono::milliseconds timeout = 15000ms) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (node(i).lastError().find(line, after) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(50ms);
    }
    return true;
  }

  // Job `job` as n1 sees it: rank 1 (this process) at n1, rank 0 at `root`,
  // reached at `root_endpoint`, so that n1 heartbeats `root`. Again for a
  // job n1 knows: the root's endpoint moves.
  grpc::Status joinJob(const std::string& job, const std::string& root, const std::string& root_endpoint) {
    auto local = v1::FaultsService::NewStub(
        grpc::CreateChannel("unix:" + node(1).socket().string(), grpc::InsecureChannelCredentials()));
    v1::RegisterRankRequest rank;
    rank.set_job_id(job);
    rank.set_rank(1);
    rank.set_size(2);
    rank.set_node("n1");
    rank.set_pid(getpid());
    rank.set_endpoint(cluster_.address(1));
    v1::RegisterRankResponse registered;
    grpc::ClientContext register_context;
    register_context.set_deadline(std::chrono::system_clock::now() + 5s);
    if (grpc::Status s = local->RegisterRank(&register_context, rank, &registered); !s.ok()) return s;
    v1::SetJobNodesRequest request;
    request.set_job_id(job);
    for (const auto& [name, endpoint, r] : {std::tuple{root, root_endpoint, 0u}, std::tuple{std::string("n1"), cluster_.address(1), 1u}}) {
      v1::JobNode* n = request.add_nodes();
      n->set_node(name);
      n->set_endpoint(endpoint);
      n->add_ranks(r);
    }
    v1::SetJobNodesResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    return local->SetJobNodes(&context, request, &response);
  }

  static grpc::Status probe(const std::shared_ptr<grpc::Channel>& channel, v1::ProbeResponse* reply,
                            const std::string& token = "") {
    auto stub = v1::FaultTreeService::NewStub(channel);
    v1::ProbeRequest request;
    request.set_job_id(kJob);
    request.set_node("n1");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    if (!token.empty()) context.AddMetadata("x-nodekeeper-peer-token", token);
    return stub->ResponseProbe(&context, request, reply);
  }
  // A heartbeat that says it is from `from`.
  static grpc::Status heartbeat(const std::shared_ptr<grpc::Channel>& channel, const std::string& from) {
    auto stub = v1::FaultTreeService::NewStub(channel);
    v1::HeartbeatRequest request;
    request.set_job_id(kJob);
    request.set_node(from);
    v1::HeartbeatResponse reply;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    return stub->Heartbeat(&context, request, &reply);
  }
  // A fault about `about`, published at the callee as a tree's root would.
  static grpc::Status publish(const std::shared_ptr<grpc::Channel>& channel, const std::string& about) {
    auto stub = v1::FaultTreeService::NewStub(channel);
    v1::FaultReport fault;
    fault.set_job_id(kJob);
    fault.set_kind(v1::FAULT_KIND_NODE_DOWN);
    fault.set_node(about);
    fault.add_ranks(3);
    fault.set_localised_by("n2");
    const int64_t now = wallClockNs();
    fault.set_first_symptom_ns(now);
    fault.set_localised_ns(now);
    fault.add_evidence("planted by a peer");
    v1::PublishFaultResponse reply;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    return stub->PublishFault(&context, fault, &reply);
  }
  // The services reflection lists at `channel`, or the call's status.
  static grpc::Status listServices(const std::shared_ptr<grpc::Channel>& channel, std::set<std::string>* names) {
    auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    auto stream = reflection->ServerReflectionInfo(&context);
    grpc::reflection::v1alpha::ServerReflectionRequest request;
    request.set_list_services("");
    stream->Write(request);
    stream->WritesDone();
    grpc::reflection::v1alpha::ServerReflectionResponse listing;
    while (stream->Read(&listing))
      for (const auto& service : listing.list_services_response().service()) names->insert(service.name());
    return stream->Finish();
  }
  static grpc::Status health(const std::shared_ptr<grpc::Channel>& channel,
                             grpc::health::v1::HealthCheckResponse* reply) {
    auto stub = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    return stub->Check(&context, grpc::health::v1::HealthCheckRequest(), reply);
  }

  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  TempDir dir_{"peertls", TempDir::Access::kShared};
  DaemonCluster cluster_{dir_.path(), 4111};
  std::vector<pid_t> rank_pids_;
  MpiJob job_;
};

// Four daemons with certificates of one CA and no token: the tree's
// heartbeats and probes go over mutual TLS, no node is blamed while all
// run, and a killed leaf (n4, below the root n1) is localised as node_down.
TEST_F(PeerTlsTest, AFaultTreeOverMutualTlsLocalisesAKilledNode) {
  if (!haveMpi()) GTEST_SKIP() << "no MPI programs built";
  ASSERT_NO_FATAL_FAILURE(startCluster(4, [&](int i) { return tlsFlags(i, pki()); }));
  for (int i = 1; i <= 4; ++i) {
    const std::string log = node(i).lastError();
    EXPECT_TRUE(contains(log, "serving the fault tree to peers on " + cluster_.address(i) + " (mutual TLS required)")) << log;
    EXPECT_TRUE(contains(log, "peers over mutual TLS: this node is CN=" + nodeName(i) + " (valid until 20")) << log;
    EXPECT_TRUE(contains(log, " UTC), peers must chain to CN=site CA")) << log;
    EXPECT_FALSE(contains(log, "in clear")) << log;
  }
  ASSERT_TRUE(job_.start(mpirun({"hang", "600", "100"}), dir_ / "job.out", dir_ / "job.err"));
  auto deadline = std::chrono::steady_clock::now() + 90s;
  for (int i = 1; i <= 4; ++i) {
    while (!contains(node(i).lastError(), treeLine())) {
      ASSERT_TRUE(std::chrono::steady_clock::now() < deadline)
          << nodeName(i) << " built no tree:\n" << logs() << "\nmpirun:\n" << job_.err();
      ASSERT_EQ(job_.wait(0ms), -1) << "the job ended: " << job_.err();
      std::this_thread::sleep_for(100ms);
    }
  }
  rank_pids_.assign(5, -1);
  for (int i = 1; i <= 4; ++i) {
    Json jobs = cliJson(i, {"jobs"});
    ASSERT_TRUE(jobs.contains("jobs")) << jobs.dump();
    for (const auto& j : jobs["jobs"])
      if (j["job_id"] == kJob && j["ranks"].size() == 1) rank_pids_[i] = j["ranks"][0]["pid"].get<pid_t>();
    ASSERT_GT(rank_pids_[i], 0) << nodeName(i) << ": " << jobs.dump();
  }
  // Heartbeats go round over TLS: while every node runs, none is blamed.
  std::this_thread::sleep_for(2000ms);
  ASSERT_EQ(faults(1), Json::array()) << logs();

  node(4).kill9();
  ::kill(rank_pids_[4], SIGKILL);
  auto down = waitForFault(1, "n4");
  ASSERT_TRUE(down) << faults(1).dump(2) << logs();
  SCOPED_TRACE(down->dump(2));
  EXPECT_EQ(down->value("kind", ""), "node_down");
  EXPECT_EQ(down->value("localised_by", ""), "n1");
  EXPECT_EQ(down->value("ranks", std::vector<uint32_t>{}), std::vector<uint32_t>{3});
  std::string evidence;
  for (const auto& line : (*down)["evidence"]) evidence += line.get<std::string>() + "\n";
  EXPECT_TRUE(contains(evidence, kDown)) << evidence;
  // Only the killed node is blamed.
  std::this_thread::sleep_for(1500ms);
  Json list = faults(1);
  ASSERT_EQ(list.size(), 1u) << list.dump(2) << logs();
}

// A caller with a certificate from another CA, with no certificate, or in
// clear is refused in the handshake (UNAVAILABLE) whatever it calls, and
// nothing it sends is taken; the site's own certificate gets through, with
// health and reflection, since the handshake authenticated it.
TEST_F(PeerTlsTest, APeerOfAnotherCaOrWithoutACertificateIsRefused) {
  ASSERT_NO_FATAL_FAILURE(startCluster(2, [&](int i) { return tlsFlags(i, pki()); }));
  struct Stranger {
    const char* who;
    std::shared_ptr<grpc::Channel> channel;
  };
  const std::vector<Stranger> strangers = {
      // Trusts the site's CA (so it would take n1's answer), but its own
      // certificate is the rogue CA's, for the same name and address.
      {"another CA's certificate", tlsChannel(1, pki() / "ca.pem", roguePki() / "n2.pem", roguePki() / "n2.key")},
      {"no certificate", tlsChannel(1, pki() / "ca.pem", {}, {})},
      {"in clear", plainChannel(1)},
  };
  for (const Stranger& s : strangers) {
    SCOPED_TRACE(s.who);
    v1::ProbeResponse reply;
    grpc::Status probed = probe(s.channel, &reply);
    EXPECT_EQ(probed.error_code(), grpc::StatusCode::UNAVAILABLE) << probed.error_message();
    EXPECT_FALSE(reply.alive());
    grpc::Status beat = heartbeat(s.channel, "n2");
    EXPECT_EQ(beat.error_code(), grpc::StatusCode::UNAVAILABLE) << beat.error_message();
    grpc::Status published = publish(s.channel, "n4");
    EXPECT_EQ(published.error_code(), grpc::StatusCode::UNAVAILABLE) << published.error_message();
    std::set<std::string> names;
    grpc::Status listed = listServices(s.channel, &names);
    EXPECT_EQ(listed.error_code(), grpc::StatusCode::UNAVAILABLE) << listed.error_message();
    EXPECT_TRUE(names.empty());
    grpc::health::v1::HealthCheckResponse status;
    grpc::Status checked = health(s.channel, &status);
    EXPECT_EQ(checked.error_code(), grpc::StatusCode::UNAVAILABLE) << checked.error_message();
  }
  // The daemon that refused them is the one that talks to the site, not
  // one that refuses everything: n2's certificate gets through, reflection
  // and health answer it, and its fault is taken.
  auto site = siteChannel(1, 2);
  v1::ProbeResponse reply;
  grpc::Status probed = probe(site, &reply);
  ASSERT_TRUE(probed.ok()) << probed.error_message();
  EXPECT_TRUE(reply.alive());
  EXPECT_EQ(reply.node(), "n1");
  EXPECT_TRUE(heartbeat(site, "n2").ok());
  // A site peer speaks for its own node only: n2's certificate cannot keep
  // n3 alive.
  grpc::Status impersonated = heartbeat(site, "n3");
  EXPECT_EQ(impersonated.error_code(), grpc::StatusCode::PERMISSION_DENIED) << impersonated.error_message();
  EXPECT_TRUE(contains(impersonated.error_message(), "names node 'n2' may not speak for node 'n3'"))
      << impersonated.error_message();
  std::set<std::string> names;
  grpc::Status listed = listServices(site, &names);
  EXPECT_TRUE(listed.ok()) << listed.error_message();
  EXPECT_TRUE(names.count("nodekeeper.v1.FaultTreeService"));
  EXPECT_FALSE(names.count("nodekeeper.v1.NodeService")) << "the TCP port serves the fault tree only";
  grpc::health::v1::HealthCheckResponse status;
  grpc::Status checked = health(site, &status);
  EXPECT_TRUE(checked.ok()) << checked.error_message();
  EXPECT_EQ(status.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  // Nothing the strangers sent was taken; the site's own fault is.
  EXPECT_EQ(faults(1), Json::array()) << logs();
  grpc::Status published = publish(site, "n3");
  ASSERT_TRUE(published.ok()) << published.error_message();
  Json list = faults(1);
  ASSERT_EQ(list.size(), 1u) << list.dump(2);
  EXPECT_EQ(list[0].value("node", ""), "n3");
}

// Each refused handshake is a gRPC error line; a stranger knocking again
// and again must not fill the daemon's log: a few lines a minute are kept.
TEST_F(PeerTlsTest, RefusedHandshakesCannotFloodTheLog) {
  ASSERT_NO_FATAL_FAILURE(startCluster(1, [&](int i) { return tlsFlags(i, pki()); }));
  for (int i = 0; i < 40; ++i) {
    v1::ProbeResponse reply;
    EXPECT_EQ(probe(plainChannel(1), &reply).error_code(), grpc::StatusCode::UNAVAILABLE);
  }
  const std::string log = node(1).lastError();
  size_t refusals = 0;
  for (size_t at = log.find("Handshake failed"); at != std::string::npos; at = log.find("Handshake failed", at + 1))
    ++refusals;
  EXPECT_GE(refusals, 1u) << "the refusals are logged at all\n" << log;
  EXPECT_LE(refusals, 10u) << log;
}

// The check goes both ways: a site peer (n3's certificate, the site's CA)
// is taken by the site's daemon n1 and refused by n2, a daemon with the
// rogue CA's certificate, whom it does not trust either; a rogue peer is
// taken by n2 only.
TEST_F(PeerTlsTest, EachSideRefusesTheOthersCa) {
  ASSERT_NO_FATAL_FAILURE(startCluster(2, [&](int i) { return tlsFlags(i, i == 1 ? pki() : roguePki()); }));
  EXPECT_EQ(heartbeat(siteChannel(1, 3), "n3").error_code(), grpc::StatusCode::OK);
  EXPECT_EQ(heartbeat(siteChannel(2, 3), "n3").error_code(), grpc::StatusCode::UNAVAILABLE)
      << "n2 holds the rogue CA's certificate and trusts only it";
  EXPECT_EQ(heartbeat(tlsChannel(2, roguePki() / "ca.pem", roguePki() / "n3.pem", roguePki() / "n3.key"), "n3")
                .error_code(),
            grpc::StatusCode::OK);
  EXPECT_EQ(heartbeat(tlsChannel(1, roguePki() / "ca.pem", roguePki() / "n3.pem", roguePki() / "n3.key"), "n3")
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// The token is an option inside TLS: a daemon that has one asks it of
// callers the handshake let in.
TEST_F(PeerTlsTest, InsideTlsTheTokenIsStillChecked) {
  const std::string token = "a-token-of-thirty-two-characters-long";
  std::ofstream(dir_ / "token") << token << "\n";
  ::chmod((dir_ / "token").c_str(), 0600);
  ASSERT_NO_FATAL_FAILURE(startCluster(1, [&](int i) {
    auto flags = tlsFlags(i, pki());
    flags.insert(flags.end(), {"--peer-token", (dir_ / "token").string()});
    return flags;
  }));
  EXPECT_TRUE(contains(node(1).lastError(), "(mutual TLS and the peer token required)")) << node(1).lastError();
  auto site = siteChannel(1, 2);
  v1::ProbeResponse reply;
  EXPECT_EQ(probe(site, &reply).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(probe(site, &reply, "not-the-token-at-all-0123456789").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  grpc::Status right = probe(site, &reply, token);
  ASSERT_TRUE(right.ok()) << right.error_message();
  EXPECT_TRUE(reply.alive());
  // The token without a certificate does not get past the handshake.
  EXPECT_EQ(probe(tlsChannel(1, pki() / "ca.pem", {}, {}), &reply, token).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// In clear (token only), the TCP port serves the fault tree and nothing
// else: health and reflection would answer without the token. The Unix
// socket still serves both. A wildcard address and clear traffic are each
// warned about.
TEST_F(PeerTlsTest, InClearTheTcpPortServesNoHealthOrReflectionAndWarns) {
  std::filesystem::path token = dir_ / "token";
  std::ofstream(token) << "a-token-of-thirty-two-characters-long\n";
  ::chmod(token.c_str(), 0600);
  DaemonProcess n1;
  std::filesystem::create_directories(dir_ / "s1");
  bool started = false;
  int port = 0;
  for (int attempt = 0; attempt < 20 && !started; ++attempt) {
    port = cluster_.port() + 3 + attempt * 7;
    if (!addressFree("0.0.0.0", port)) continue;
    started = n1.start(dir_ / "s1", {"--node-name", "n1", "--listen", "0.0.0.0:" + std::to_string(port),
                                         "--peer-token", token.string()});
  }
  ASSERT_TRUE(started) << n1.lastError();
  const std::string log = n1.lastError();
  EXPECT_TRUE(contains(log, "peer traffic is in clear")) << log;
  EXPECT_TRUE(contains(log, "--listen 0.0.0.0:" + std::to_string(port) + " takes peer calls on every interface"))
      << log;

  auto tcp = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  std::set<std::string> names;
  grpc::Status listed = listServices(tcp, &names);
  EXPECT_EQ(listed.error_code(), grpc::StatusCode::UNIMPLEMENTED) << listed.error_message();
  EXPECT_TRUE(names.empty());
  grpc::health::v1::HealthCheckResponse status;
  grpc::Status checked = health(tcp, &status);
  EXPECT_EQ(checked.error_code(), grpc::StatusCode::UNIMPLEMENTED) << checked.error_message();
  // The port is up and takes the token: the refusals above are not a
  // dead port.
  v1::ProbeResponse reply;
  EXPECT_EQ(probe(tcp, &reply).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  auto unix_socket = grpc::CreateChannel("unix:" + n1.socket().string(), grpc::InsecureChannelCredentials());
  names.clear();
  listed = listServices(unix_socket, &names);
  EXPECT_TRUE(listed.ok()) << listed.error_message();
  EXPECT_TRUE(names.count("nodekeeper.v1.NodeService"));
  EXPECT_TRUE(health(unix_socket, &status).ok());
}

// A stand-in for a peer daemon: a TLS listener with `name`'s certificate of
// `site`, that takes heartbeats and keeps the certificate each caller
// presented.
class RecordingPeer final : public v1::FaultTreeService::Service {
 public:
  bool start(const std::string& address, const std::filesystem::path& site, const std::string& name) {
    grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    options.pem_root_certs = readFile(site / "ca.pem");
    options.pem_key_cert_pairs.push_back({readFile(site / (name + ".key")), readFile(site / (name + ".pem"))});
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(address, grpc::SslServerCredentials(options), &port);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    return server_ && port != 0;
  }
  ~RecordingPeer() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 1s);
  }
  grpc::Status Heartbeat(grpc::ServerContext* context, const v1::HeartbeatRequest*, v1::HeartbeatResponse*) override {
    auto certs = context->auth_context()->FindPropertyValues("x509_pem_cert");
    std::lock_guard lock(mutex_);
    ++heartbeats_;
    if (!certs.empty()) presented_.insert(std::string(certs.front().data(), certs.front().size()));
    return grpc::Status::OK;
  }
  size_t heartbeats() const {
    std::lock_guard lock(mutex_);
    return heartbeats_;
  }
  std::set<std::string> presented() const {
    std::lock_guard lock(mutex_);
    return presented_;
  }

 private:
  std::unique_ptr<grpc::Server> server_;
  mutable std::mutex mutex_;
  size_t heartbeats_ = 0;
  std::set<std::string> presented_;
};

// A renewed certificate is taken on SIGHUP, without a restart, both ways:
// the listener presents it in new handshakes, and so do the channels the
// daemon opens to its peers; connections already up keep going. Files that
// do not pass the checks are refused with a line and change nothing.
TEST_F(PeerTlsTest, ARenewedCertificateIsTakenOnSighupWithoutARestart) {
  ASSERT_NO_FATAL_FAILURE(startCluster(1, [&](int i) { return tlsFlags(i, pki()); }));
  const std::string first = readFile(pki() / "n1.pem");
  ASSERT_EQ(certificateServedBy(1, 2), first) << node(1).lastError();

  // A job whose rank 0 is at n2, this test, and rank 1 (this process too) at
  // n1: n1 heartbeats n2, the root of the job's tree.
  RecordingPeer before;
  const std::string peer_before = ip(2) + ":" + std::to_string(cluster_.port() + 11);
  ASSERT_TRUE(before.start(peer_before, pki(), "n2"));
  grpc::Status joined = joinJob(kJob, "n2", peer_before);
  ASSERT_TRUE(joined.ok()) << joined.error_message();
  auto waitForHeartbeat = [&](const RecordingPeer& peer) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (peer.heartbeats() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(50ms);
    return peer.heartbeats() > 0;
  };
  ASSERT_TRUE(waitForHeartbeat(before)) << node(1).lastError();
  EXPECT_EQ(before.presented(), std::set<std::string>{first});

  // The site renews n1's certificate (a new key too) where the flags point.
  ProcessResult renewed = runProgram(
      {envOr("NK_MAKE_PEER_CERTS"), "--dir", pki().string(), "--ca-name", "site CA", "--force", "n1=" + ip(1)},
      std::nullopt, 60s);
  ASSERT_EQ(renewed.exit_code, 0) << renewed.out << renewed.err;
  const std::string second = readFile(pki() / "n1.pem");
  ASSERT_NE(second, first);
  auto kept = siteChannel(1, 3);  // a connection made before the SIGHUP
  v1::ProbeResponse reply;
  ASSERT_TRUE(probe(kept, &reply).ok());

  size_t log_at = node(1).lastError().size();
  ASSERT_NO_FATAL_FAILURE(sighup(1));
  ASSERT_TRUE(logSays(1, "SIGHUP: reloaded the peer certificate, key and CA: this node is CN=n1", log_at))
      << node(1).lastError().substr(log_at);
  // Within the second gRPC takes to look, new handshakes present it.
  std::string served;
  for (auto deadline = std::chrono::steady_clock::now() + 15s;
       (served = certificateServedBy(1, 2)) != second && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(100ms);
  EXPECT_EQ(served, second) << node(1).lastError().substr(log_at);
  EXPECT_TRUE(probe(kept, &reply).ok()) << "the connection made before the renewal goes on";
  // So does n1's channel to a peer it reaches anew (the job's n2 moved).
  RecordingPeer after;
  const std::string peer_after = ip(2) + ":" + std::to_string(cluster_.port() + 12);
  ASSERT_TRUE(after.start(peer_after, pki(), "n2"));
  joined = joinJob(kJob, "n2", peer_after);
  ASSERT_TRUE(joined.ok()) << joined.error_message();
  ASSERT_TRUE(waitForHeartbeat(after)) << node(1).lastError().substr(log_at);
  EXPECT_EQ(after.presented(), std::set<std::string>{second});

  // A renewal gone wrong (the key of another node) is refused and leaves
  // the renewed certificate in force.
  std::filesystem::copy_file(pki() / "n2.key", pki() / "n1.key", std::filesystem::copy_options::overwrite_existing);
  log_at = node(1).lastError().size();
  ASSERT_NO_FATAL_FAILURE(sighup(1));
  ASSERT_TRUE(logSays(1, "SIGHUP: keeping the peer certificate in force (this node is CN=n1", log_at))
      << node(1).lastError().substr(log_at);
  EXPECT_TRUE(contains(node(1).lastError().substr(log_at), "does not match peer certificate"))
      << node(1).lastError().substr(log_at);
  std::this_thread::sleep_for(2500ms);  // past gRPC's next looks at the files (every second)
  EXPECT_EQ(certificateServedBy(1, 2), second) << node(1).lastError().substr(log_at);
}

// n1's channels check that a peer's certificate names the address they
// dial: a site certificate of n2 served from n3's address is refused,
// while the same certificate at n2's own address is taken.
TEST_F(PeerTlsTest, APeerCertificateThatDoesNotNameTheAddressIsRefused) {
  ASSERT_NO_FATAL_FAILURE(startCluster(1, [&](int i) { return tlsFlags(i, pki()); }));
  RecordingPeer right, wrong;
  ASSERT_TRUE(right.start(ip(2) + ":" + std::to_string(cluster_.port() + 13), pki(), "n2"));
  ASSERT_TRUE(wrong.start(ip(3) + ":" + std::to_string(cluster_.port() + 14), pki(), "n2"));
  // Two jobs, each with n1 below a stand-in root: "n2" at its own address,
  // "n3" at an address n2's certificate does not name.
  grpc::Status joined = joinJob("right", "n2", ip(2) + ":" + std::to_string(cluster_.port() + 13));
  ASSERT_TRUE(joined.ok()) << joined.error_message();
  joined = joinJob("wrong", "n3", ip(3) + ":" + std::to_string(cluster_.port() + 14));
  ASSERT_TRUE(joined.ok()) << joined.error_message();
  // The right one hears n1 many times over; by then the wrong one would
  // have too, had its handshake passed.
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       right.heartbeats() < 10 && std::chrono::steady_clock::now() < deadline;)
    std::this_thread::sleep_for(50ms);
  ASSERT_GE(right.heartbeats(), 10u) << node(1).lastError();
  EXPECT_EQ(wrong.heartbeats(), 0u) << node(1).lastError();
}

// A bad file stops the start with one line naming it.
TEST_F(PeerTlsTest, ABadKeyOrCertificateStopsTheStart) {
  DaemonProcess n1;
  std::filesystem::create_directories(dir_ / "s1");
  std::filesystem::path open_key = dir_ / "open.key";
  std::filesystem::copy_file(pki() / "n1.key", open_key);
  ::chmod(open_key.c_str(), 0644);
  auto flags = [&](const std::filesystem::path& cert, const std::filesystem::path& key) {
    return std::vector<std::string>{"--node-name", "n1", "--listen", ip(1) + ":" + std::to_string(cluster_.port() + 5),
                                    "--peer-cert", cert.string(), "--peer-key", key.string(),
                                    "--peer-ca", (pki() / "ca.pem").string()};
  };
  EXPECT_FALSE(n1.start(dir_ / "s1", flags(pki() / "n1.pem", open_key)));
  EXPECT_TRUE(contains(n1.lastError(), "peer key " + open_key.string() +
                                                " has mode 0644: other users may read the key; chmod 600"))
      << n1.lastError();
  EXPECT_FALSE(n1.start(dir_ / "s1", flags(pki() / "n1.pem", pki() / "n2.key")));
  EXPECT_TRUE(contains(n1.lastError(), "does not match peer certificate")) << n1.lastError();
  EXPECT_FALSE(n1.start(dir_ / "s1", flags(roguePki() / "n1.pem", roguePki() / "n1.key")));
  EXPECT_TRUE(contains(n1.lastError(), "does not verify against peer CA")) << n1.lastError();
  // A sound certificate of another node: peers would refuse this one's
  // heartbeats, so it does not start.
  EXPECT_FALSE(n1.start(dir_ / "s1", flags(pki() / "n2.pem", pki() / "n2.key")));
  EXPECT_TRUE(contains(n1.lastError(), "names node 'n2' (its CN), but this node is 'n1'")) << n1.lastError();
}

}  // namespace
}  // namespace nk::test
