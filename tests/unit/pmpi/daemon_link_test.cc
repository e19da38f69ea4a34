// DaemonLink without a daemon: the job runs on, and the link's thread must
// cost it nothing while it waits to try again (it once spun on a heartbeat
// time long past, and made an FT-shaped run three to seven times slower).
#include "daemon_link.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "nodekeeper/v1/faults.grpc.pb.h"

namespace nk::pmpi {
namespace {

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

TEST(DaemonLinkTest, WithoutADaemonTheLinkWaitsInsteadOfSpinning) {
  int progress_calls = 0;
  DaemonLink link("/nonexistent/nodekeeperd.sock", std::chrono::milliseconds(10), [&] {
    ++progress_calls;
    return ProgressSnapshot{};
  });
  link.start(RankRegistration{"job", 0, 1, "node", "unix:/nonexistent", 1}, {}, "mpi", false);
  SymptomReport symptom;
  symptom.operation = "MPI_Recv";
  link.report(symptom);  // queued for a daemon that never comes: no busy loop either
  double before = processCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  double used = processCpuSeconds() - before;
  link.stop(std::chrono::milliseconds(100));
  // A spinning thread would use the whole 0.6 s of a core.
  EXPECT_LT(used, 0.15) << "the link's thread used " << used << " s of CPU in 0.6 s";
  EXPECT_EQ(progress_calls, 0);  // no heartbeats without a registration
}

// A rank ending by a signal asks for a report out of turn; with no daemon
// the answer is "not sent" at once (the handler then goes on), not after
// the deadline.
TEST(DaemonLinkTest, AnOutOfTurnReportWithoutADaemonIsNotSent) {
  DaemonLink link("/nonexistent/nodekeeperd.sock", std::chrono::milliseconds(100000), [] { return ProgressSnapshot{}; });
  EXPECT_FALSE(link.reportProgressNow(std::chrono::milliseconds(100)));  // not started: nothing to ask
  link.start(RankRegistration{"job", 0, 1, "node", "unix:/nonexistent", 1}, {}, "mpi", false);
  EXPECT_FALSE(link.reportProgressNow(std::chrono::seconds(600)));  // would hang the test if it waited
  link.stop(std::chrono::milliseconds(100));
  EXPECT_FALSE(link.reportProgressNow(std::chrono::milliseconds(100)));
}

// A daemon that answers progress reports as late as it is told to.
class SlowFaultsService final : public nodekeeper::v1::FaultsService::Service {
 public:
  std::atomic<int> delay_ms{0};
  std::atomic<int> progress_answered{0};

  grpc::Status RegisterRank(grpc::ServerContext*, const nodekeeper::v1::RegisterRankRequest*,
                            nodekeeper::v1::RegisterRankResponse*) override {
    return grpc::Status::OK;
  }
  grpc::Status ReportProgress(grpc::ServerContext*, const nodekeeper::v1::ProgressReport*,
                              nodekeeper::v1::ReportProgressResponse*) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
    ++progress_answered;
    return grpc::Status::OK;
  }
};

// What the link says on stderr while it lives, read from a file that stands
// in for the rank's stderr.
class StderrCapture {
 public:
  StderrCapture() {
    char name[] = "/tmp/nk-daemon-link-stderr-XXXXXX";
    fd_ = mkstemp(name);
    path_ = name;
    saved_ = dup(STDERR_FILENO);
    dup2(fd_, STDERR_FILENO);
  }
  ~StderrCapture() {
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    close(fd_);
    unlink(path_.c_str());
  }
  std::string text() const {
    std::ifstream in(path_);
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }

 private:
  int fd_ = -1, saved_ = -1;
  std::string path_;
};

class SlowDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/nk-daemon-link-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    socket_ = dir_ + "/nodekeeperd.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
    unlink(socket_.c_str());
    rmdir(dir_.c_str());
  }
  bool waitUntil(const std::function<bool()>& done, std::chrono::seconds limit) {
    for (auto end = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < end;) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  std::string dir_, socket_;
  SlowFaultsService service_;
  std::unique_ptr<grpc::Server> server_;
};

// Answers that come after the link's 1 s deadline (a busy node, or a rank
// stopped and continued) are retried in silence while they last less than
// `quiet_for`; when the daemon answers again nothing was said at all.
TEST_F(SlowDaemonTest, LateAnswersAreRetriedQuietly) {
  StderrCapture stderr_text;
  DaemonLink link(socket_, std::chrono::milliseconds(50), [] { return ProgressSnapshot{}; },
                  std::chrono::milliseconds(20000));
  link.start(RankRegistration{"job", 0, 1, "node", "unix:" + socket_, 1}, {}, "mpi", true);
  ASSERT_TRUE(waitUntil([&] { return service_.progress_answered > 0; }, std::chrono::seconds(20)));
  service_.delay_ms = 1500;
  const int before = service_.progress_answered;
  // At least two reports in a row missed their deadline.
  ASSERT_TRUE(waitUntil([&] { return service_.progress_answered >= before + 2; }, std::chrono::seconds(20)));
  service_.delay_ms = 0;
  const int slow = service_.progress_answered;
  ASSERT_TRUE(waitUntil([&] { return service_.progress_answered >= slow + 3; }, std::chrono::seconds(20)));
  link.stop(std::chrono::milliseconds(500));
  EXPECT_EQ(stderr_text.text(), "");
}

// A daemon that answers nothing in time for `quiet_for` is gone: said once,
// with how long it has been silent.
TEST_F(SlowDaemonTest, ADaemonSilentForQuietForIsSaidLostOnce) {
  StderrCapture stderr_text;
  DaemonLink link(socket_, std::chrono::milliseconds(50), [] { return ProgressSnapshot{}; },
                  std::chrono::milliseconds(1500));
  link.start(RankRegistration{"job", 0, 1, "node", "unix:" + socket_, 1}, {}, "mpi", true);
  ASSERT_TRUE(waitUntil([&] { return service_.progress_answered > 0; }, std::chrono::seconds(20)));
  service_.delay_ms = 2000;
  ASSERT_TRUE(waitUntil([&] { return stderr_text.text().find("lost") != std::string::npos; }, std::chrono::seconds(30)));
  service_.delay_ms = 0;
  link.stop(std::chrono::milliseconds(500));
  const std::string said = stderr_text.text();
  EXPECT_NE(said.find("lost nodekeeperd at " + socket_ + " (no answer for "), std::string::npos) << said;
  EXPECT_EQ(said.find("lost"), said.rfind("lost")) << said;
}

// A daemon that is gone (connection refused) is said lost at once.
TEST_F(SlowDaemonTest, AGoneDaemonIsSaidLostWithoutWaiting) {
  StderrCapture stderr_text;
  DaemonLink link(socket_, std::chrono::milliseconds(50), [] { return ProgressSnapshot{}; },
                  std::chrono::milliseconds(600000));
  link.start(RankRegistration{"job", 0, 1, "node", "unix:" + socket_, 1}, {}, "mpi", true);
  ASSERT_TRUE(waitUntil([&] { return service_.progress_answered > 0; }, std::chrono::seconds(20)));
  server_->Shutdown(std::chrono::system_clock::now());
  server_.reset();
  ASSERT_TRUE(waitUntil([&] { return stderr_text.text().find("lost") != std::string::npos; }, std::chrono::seconds(30)))
      << stderr_text.text();
  link.stop(std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace nk::pmpi
