#include "faults/self_answering_prober.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nk {
namespace {

using namespace std::chrono_literals;

// The network: fails the test when asked about this daemon's own node.
class RemoteProber final : public Prober {
 public:
  explicit RemoteProber(std::string self) : self_(std::move(self)) {}
  ResponseFindings responseProbe(std::string_view node, size_t attempts) override {
    EXPECT_NE(node, self_) << "a response probe about this node went through the network";
    asked.emplace_back(node);
    return {attempts, 1, 300us};
  }
  StatusFindings statusProbe(std::string_view, std::string_view node) override {
    EXPECT_NE(node, self_) << "a status probe about this node went through the network";
    asked.emplace_back(node);
    StatusFindings remote;
    remote.answered = true;
    remote.load = 0.5;
    return remote;
  }
  LogFindings logProbe(std::string_view, std::string_view node, int64_t, int64_t) override {
    EXPECT_NE(node, self_) << "a log probe about this node went through the network";
    asked.emplace_back(node);
    return {true, {"remote"}, 0};
  }
  std::vector<std::string> asked;

 private:
  std::string self_;
};

class SelfAnsweringProberTest : public ::testing::Test {
 protected:
  SelfAnsweringProber::Self self() {
    SelfAnsweringProber::Self s;
    s.is_self = [](std::string_view job, std::string_view node) {
      return node == "me" && (job.empty() || job == "job1");
    };
    s.status = [this](std::string_view job) {
      status_jobs.emplace_back(job);
      StatusFindings local;
      local.answered = true;
      local.load = 3.0;
      local.ranks.push_back({});
      return local;
    };
    s.log = [this](std::string_view job, int64_t from, int64_t to) {
      log_calls.push_back(std::string(job) + " " + std::to_string(from) + " " + std::to_string(to));
      return LogFindings{true, {"local"}, 1};
    };
    return s;
  }
  RemoteProber remote{"me"};
  std::vector<std::string> status_jobs, log_calls;
};

TEST_F(SelfAnsweringProberTest, ThisNodeIsAliveWithEveryAttemptAnsweredWithoutTheNetwork) {
  SelfAnsweringProber prober(remote, self());
  ResponseFindings found = prober.responseProbe("me", 3);
  EXPECT_TRUE(found.alive());
  EXPECT_EQ(found.attempts, 3u);
  EXPECT_EQ(found.answered, 3u);
  EXPECT_TRUE(remote.asked.empty());
}

TEST_F(SelfAnsweringProberTest, StatusAndLogOfThisNodeAreReadHere) {
  SelfAnsweringProber prober(remote, self());
  StatusFindings status = prober.statusProbe("job1", "me");
  EXPECT_TRUE(status.answered);
  EXPECT_EQ(status.load, 3.0);
  EXPECT_EQ(status_jobs, (std::vector<std::string>{"job1"}));
  LogFindings log = prober.logProbe("job1", "me", 5, 9);
  EXPECT_EQ(log.pending, 1u);
  EXPECT_EQ(log_calls, (std::vector<std::string>{"job1 5 9"}));
  EXPECT_TRUE(remote.asked.empty());
}

TEST_F(SelfAnsweringProberTest, OtherNodesAreProbedOverTheNetwork) {
  SelfAnsweringProber prober(remote, self());
  EXPECT_EQ(prober.responseProbe("n2", 2).best_rtt, 300us);
  EXPECT_EQ(prober.statusProbe("job1", "n2").load, 0.5);
  EXPECT_EQ(prober.logProbe("job1", "n2", 0, 0).entries, (std::vector<std::string>{"remote"}));
  EXPECT_EQ(remote.asked, (std::vector<std::string>{"n2", "n2", "n2"}));
  EXPECT_TRUE(status_jobs.empty());
}

// "me" is this daemon's name in job1 only: in job2 a node of that name is
// another daemon (emulated nodes on one host).
TEST_F(SelfAnsweringProberTest, ANameThatIsThisNodeInAnotherJobOnlyIsProbedRemotely) {
  RemoteProber anywhere{""};
  SelfAnsweringProber prober(anywhere, self());
  EXPECT_TRUE(prober.statusProbe("job2", "me").answered);
  EXPECT_EQ(anywhere.asked, (std::vector<std::string>{"me"}));
}

TEST_F(SelfAnsweringProberTest, WithoutALocalLogReaderTheLogProbeOfThisNodeIsUnanswered) {
  SelfAnsweringProber::Self s = self();
  s.log = nullptr;
  SelfAnsweringProber prober(remote, s);
  EXPECT_FALSE(prober.logProbe("job1", "me", 0, 0).answered);
  EXPECT_TRUE(remote.asked.empty());
}

}  // namespace
}  // namespace nk
