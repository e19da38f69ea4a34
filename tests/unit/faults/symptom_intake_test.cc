#include "faults/symptom_intake.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fake_process_state_reader.h"
#include "faults/peer_network.h"

namespace nk {
namespace {

using namespace std::chrono_literals;
using test::FakeProcessStateReader;

constexpr const char* kJob = "job-1";
constexpr int64_t kSecond = 1'000'000'000;
// This daemon's clock when the symptoms arrive.
constexpr int64_t kNow = 1000 * kSecond;

// The other nodes' daemons: each answers RankProgress as the test set it;
// a node it did not set does not answer. Every round is recorded.
class FakePeerNetwork final : public PeerNetwork {
 public:
  struct ProgressCall {
    std::string job_id;
    std::vector<std::string> nodes;
    std::vector<std::string> endpoints;
    std::chrono::milliseconds deadline{0};
  };

  void answer(const std::string& node, PeerProgress progress) { answers_.insert_or_assign(node, std::move(progress)); }

  Delivery forwardSymptom(std::string_view, const SymptomRecord&) override {
    ADD_FAILURE() << "the intake forwarded a symptom";
    return Delivery::kUnreachable;
  }
  Delivery publishFault(std::string_view, const FaultRecord&) override {
    ADD_FAILURE() << "the intake published a fault";
    return Delivery::kUnreachable;
  }
  Delivery heartbeat(std::string_view, std::string_view, std::string_view, bool) override {
    ADD_FAILURE() << "the intake sent a heartbeat";
    return Delivery::kUnreachable;
  }
  std::vector<Result<PeerProgress>> rankProgress(std::string_view job_id, std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds deadline) override {
    ProgressCall call{std::string(job_id), {}, {}, deadline};
    std::vector<Result<PeerProgress>> out;
    for (const JobNodeRecord& node : nodes) {
      call.nodes.push_back(node.node);
      call.endpoints.push_back(node.endpoint);
      auto it = answers_.find(node.node);
      if (it == answers_.end()) out.emplace_back(unavailable("connection refused"));
      else out.emplace_back(it->second);
    }
    calls.push_back(std::move(call));
    return out;
  }

  std::vector<ProgressCall> calls;

 private:
  std::map<std::string, PeerProgress> answers_;
};

PeerRankProgress remoteRank(uint32_t rank, uint64_t world, int64_t last_report_ns, std::string state = "sleeping",
                            std::string node = "b") {
  return {rank, std::move(node), {{"world", world}}, last_report_ns, std::move(state)};
}

// Job "job-1" of 4 ranks: 0 and 1 registered here on node a, 2 and 3 on
// node b, whose daemon answers at b:7000.
class SymptomIntakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    processes_.set(100, ProcessState::kSleeping);
    processes_.set(101, ProcessState::kSleeping);
    ASSERT_TRUE(jobs_.registerRank(registration(0, 100)).ok());
    ASSERT_TRUE(jobs_.registerRank(registration(1, 101)).ok());
  }

  static RankRegistration registration(uint32_t rank, pid_t pid, uint32_t size = 4) {
    RankRegistration r;
    r.job_id = kJob;
    r.rank = rank;
    r.size = size;
    r.node = "a";
    r.pid = pid;
    r.uid = 1000;
    // As the rank saw this daemon: another spelling of its socket.
    r.endpoint = "unix:/run/nodekeeper/../nodekeeper/a.sock";
    r.now_ns = kNow - 10 * kSecond;
    return r;
  }

  void setNodes() {
    ASSERT_TRUE(jobs_.setNodes(kJob, {{"a", "unix:/run/nodekeeper/a.sock", {0, 1}}, {"b", "b:7000", {2, 3}}}, kNow)
                    .ok());
  }

  // Local rank `rank` has entered `world` collectives of world, `ago` before now.
  void progress(uint32_t rank, uint64_t world, std::chrono::nanoseconds ago = 100ms) {
    ProgressUpdate u;
    u.job_id = kJob;
    u.rank = rank;
    u.communicators = {{"world", world}};
    u.current_operation = "MPI_Allreduce";
    u.now_ns = kNow - ago.count();
    ASSERT_TRUE(jobs_.recordProgress(std::move(u), std::nullopt).ok());
  }

  static SymptomRecord pointToPoint(uint32_t reporter, std::vector<uint32_t> suspects) {
    SymptomRecord s;
    s.job_id = kJob;
    s.kind = SymptomKind::kResponseTimeout;
    s.reporter_rank = reporter;
    s.suspect_ranks = std::move(suspects);
    s.operation = "MPI_Recv";
    return s;
  }

  // Rank `reporter` timed out in the 5th collective of world.
  static SymptomRecord allreduceTimeout(uint32_t reporter, std::vector<uint32_t> members = {0, 1, 2, 3}) {
    SymptomRecord s;
    s.job_id = kJob;
    s.kind = SymptomKind::kResponseTimeout;
    s.reporter_rank = reporter;
    s.operation = "MPI_Allreduce";
    s.communicator = "world";
    s.collective_seq = 5;
    s.communicator_members = std::move(members);
    s.detail = "waited 30 s";
    return s;
  }

  Result<SymptomRecord> take(SymptomRecord s, std::optional<pid_t> caller = std::nullopt) {
    return intake_.take(std::move(s), caller, kNow);
  }

  static std::string refusal(const Result<SymptomRecord>& result) {
    return result.ok() ? "accepted" : result.error().message;
  }

  SymptomIntake::Options options() {
    SymptomIntake::Options o;
    o.peer_timeout = 500ms;
    o.heartbeat_period = 200ms;
    o.stale_periods = 3;  // with the peer timeout: stale after 1.1 s
    o.own_endpoint = "unix:///run/nodekeeper/./a.sock";
    o.log_warning = [this](const std::string& message) { warnings_.push_back(message); };
    return o;
  }

  FakeProcessStateReader processes_;
  JobRegistry jobs_{processes_};
  FakePeerNetwork network_;
  std::vector<std::string> warnings_;
  SymptomIntake intake_{jobs_, network_, options()};
};

TEST_F(SymptomIntakeTest, ASymptomWithoutJobOrKindIsRefused) {
  SymptomRecord s = pointToPoint(0, {2});
  s.job_id.clear();
  auto result = take(s);
  EXPECT_EQ(refusal(result), "job_id is empty");
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);

  for (int kind : {0, 7, 99}) {
    s = pointToPoint(0, {2});
    s.kind = static_cast<SymptomKind>(kind);
    result = take(s);
    EXPECT_EQ(refusal(result),
              "kind " + std::to_string(kind) + " is not a symptom kind (RESPONSE_TIMEOUT, MPI_ERROR, ...)");
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST_F(SymptomIntakeTest, TextsLongerThanTheirLimitAreRefusedByName) {
  struct Field {
    std::string SymptomRecord::*member;
    const char* name;
    size_t limit;
  };
  for (const Field& f : {Field{&SymptomRecord::reporter_node, "reporter_node", 256},
                         Field{&SymptomRecord::suspect_node, "suspect_node", 256},
                         Field{&SymptomRecord::operation, "operation", 256},
                         Field{&SymptomRecord::communicator, "communicator", 256},
                         Field{&SymptomRecord::detail, "detail", 4096}}) {
    SymptomRecord s = pointToPoint(0, {2});
    s.*f.member = std::string(f.limit + 1, 'x');
    auto result = take(s);
    EXPECT_EQ(refusal(result), std::string(f.name) + " is longer than " + std::to_string(f.limit) + " bytes");
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  }
  // At the limit is allowed (the node list is not set, so any suspect node is).
  SymptomRecord s = pointToPoint(0, {2});
  s.operation = std::string(256, 'x');
  s.detail = std::string(4096, 'x');
  EXPECT_EQ(refusal(take(s)), "accepted");
}

TEST_F(SymptomIntakeTest, ARankSpeaksOnlyForItselfAnAdminForAnyRank) {
  auto result = take(pointToPoint(0, {2}), 101);
  EXPECT_EQ(refusal(result), "rank 0 of job 'job-1' was registered by pid 100; you are pid 101");
  EXPECT_EQ(result.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(refusal(take(pointToPoint(0, {2}), 100)), "accepted");
  // An admin (no caller pid) may report for a rank of another node.
  EXPECT_EQ(refusal(take(pointToPoint(2, {0}))), "accepted");
  EXPECT_EQ(take(pointToPoint(2, {0}), 100).error().code, ErrorCode::kNotFound);
}

TEST_F(SymptomIntakeTest, AJobNotRegisteredHereIsNotFound) {
  SymptomRecord s = pointToPoint(0, {2});
  s.job_id = "unknown";
  auto result = take(s);
  EXPECT_EQ(refusal(result), "no job 'unknown' is registered at this daemon (its ranks call RegisterRank first)");
  EXPECT_EQ(result.error().code, ErrorCode::kNotFound);
}

TEST_F(SymptomIntakeTest, RanksOutsideTheJobAreRefusedNamingTheField) {
  auto result = take(pointToPoint(4, {2}));
  EXPECT_EQ(refusal(result), "reporter_rank 4 is not below the size 4 of job 'job-1'");
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(refusal(take(pointToPoint(0, {2, 3, 7}))), "suspect_ranks[2] is rank 7, but job 'job-1' has size 4");
  EXPECT_EQ(refusal(take(allreduceTimeout(0, {0, 1, 2, 3, 9}))),
            "communicator_members[4] is rank 9, but job 'job-1' has size 4");
  EXPECT_TRUE(network_.calls.empty());
}

TEST_F(SymptomIntakeTest, ASuspectNodeMustBeOneOfTheJobsNodesOnceTheyAreKnown) {
  SymptomRecord s = pointToPoint(0, {2});
  s.suspect_node = "a,zz";
  // Without a node list there is nothing to check against.
  EXPECT_EQ(refusal(take(s)), "accepted");
  setNodes();
  auto result = take(s);
  EXPECT_EQ(refusal(result), "suspect_node 'zz' is not a node of job 'job-1' (its nodes: a,b)");
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  s.suspect_node = "b,,a";
  auto accepted = take(s);
  ASSERT_TRUE(accepted.ok()) << refusal(accepted);
  EXPECT_EQ(accepted->suspect_node, "b,,a");  // as the agent named it
}

TEST_F(SymptomIntakeTest, FillsInTheOwnerTheTimeAndTheReportersNode) {
  setNodes();
  SymptomRecord s = pointToPoint(0, {2});
  s.symptom_id = 77;
  s.uid = 0;
  auto filled = take(s);
  ASSERT_TRUE(filled.ok()) << refusal(filled);
  EXPECT_EQ(filled->symptom_id, 0u);  // the store numbers it
  EXPECT_EQ(filled->uid, 1000u);      // the job's, not what the report said
  EXPECT_EQ(filled->timestamp_ns, kNow);
  EXPECT_EQ(filled->reporter_node, "a");  // from its registration
  EXPECT_EQ(filled->operation, "MPI_Recv");

  s.timestamp_ns = 12345;
  s.reporter_node = "elsewhere";
  filled = take(s);
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->timestamp_ns, 12345);
  EXPECT_EQ(filled->reporter_node, "elsewhere");

  // A rank of another node (an admin reports for it): from the node list.
  filled = take(pointToPoint(3, {0}));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->reporter_node, "b");
}

TEST_F(SymptomIntakeTest, APointToPointSuspectsNodesComeFromTheNodeList) {
  // Before the node list, only ranks registered here have a node.
  auto filled = take(pointToPoint(0, {3, 1}));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_node, "a");
  filled = take(pointToPoint(0, {3}));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_node, "");

  setNodes();
  filled = take(pointToPoint(0, {3, 1, 2}));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_node, "b,a");
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{3, 1, 2}));
  EXPECT_EQ(filled->detail, "");

  SymptomRecord named = pointToPoint(0, {3});
  named.suspect_node = "a";
  filled = take(named);
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_node, "a");  // the agent's word stands
  // An MPI error is no collective timeout: nobody is asked.
  SymptomRecord error = allreduceTimeout(0);
  error.kind = SymptomKind::kMpiError;
  filled = take(error);
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->detail, "waited 30 s");
  EXPECT_TRUE(network_.calls.empty());
}

TEST_F(SymptomIntakeTest, WhenEveryMemberArrivedNobodyIsSuspectedAndOnlyOtherNodesAreAsked) {
  setNodes();
  progress(0, 5);
  progress(1, 5);
  network_.answer("b", {kNow, {remoteRank(2, 5, kNow - 100'000'000), remoteRank(3, 6, kNow - 50'000'000)}});
  auto filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok()) << refusal(filled);
  EXPECT_TRUE(filled->suspect_ranks.empty());
  EXPECT_EQ(filled->suspect_node, "");
  EXPECT_EQ(filled->detail, "waited 30 s; every member known has entered collective 5 of world and reports progress");

  ASSERT_EQ(network_.calls.size(), 1u);
  EXPECT_EQ(network_.calls[0].job_id, kJob);
  // Node a is this daemon (its endpoint, however spelt): not asked.
  EXPECT_EQ(network_.calls[0].nodes, (std::vector<std::string>{"b"}));
  EXPECT_EQ(network_.calls[0].endpoints, (std::vector<std::string>{"b:7000"}));
  EXPECT_EQ(network_.calls[0].deadline, 500ms);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(SymptomIntakeTest, LaggardsAreNamedAcrossLocalAndRemoteRanks) {
  setNodes();
  progress(0, 5);
  progress(1, 4);  // behind, here
  network_.answer("b", {kNow, {remoteRank(2, 5, kNow - 100'000'000), remoteRank(3, 5, kNow - 100'000'000, "stopped")}});
  auto filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok()) << refusal(filled);
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(filled->suspect_node, "a,b");
  EXPECT_EQ(filled->detail,
            "waited 30 s; not arrived: 1@a entered 4 of 5 collectives of world; 3@b process stopped");

  // A local rank's process state comes from this node.
  progress(1, 5);
  processes_.set(101, ProcessState::kStopped);
  network_.answer("b", {kNow, {remoteRank(2, 5, kNow - 100'000'000), remoteRank(3, 5, kNow - 100'000'000)}});
  filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{1}));
  EXPECT_EQ(filled->suspect_node, "a");
  EXPECT_EQ(filled->detail, "waited 30 s; not arrived: 1@a process stopped");
}

TEST_F(SymptomIntakeTest, ARemoteRanksReportAgeIsMeasuredByItsOwnDaemonsClock) {
  setNodes();
  progress(0, 5);
  progress(1, 5);
  // Node b's clock is far behind this one's: 2 s since rank 2's report by
  // its clock is stale; 0.5 s since rank 3's is not.
  const int64_t remote_now = 10 * kSecond;
  network_.answer("b", {remote_now, {remoteRank(2, 5, remote_now - 2 * kSecond),
                                     remoteRank(3, 5, remote_now - kSecond / 2, "sleeping", "")}});
  auto filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{2}));
  EXPECT_EQ(filled->detail, "waited 30 s; not arrived: 2@b last progress report 2.0 s ago");

  // A daemon that gives no time is measured by this one's clock.
  network_.answer("b", {0, {remoteRank(2, 5, kNow - 3 * kSecond), remoteRank(3, 5, kNow - kSecond / 2, "sleeping", "")}});
  filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{2}));
  EXPECT_EQ(filled->detail, "waited 30 s; not arrived: 2@b last progress report 3.0 s ago");

  // A rank whose node is not said is on the node that answered; a rank
  // that never reported lags.
  network_.answer("b", {kNow, {remoteRank(2, 5, kNow, "sleeping", ""), remoteRank(3, 5, 0, "sleeping", "")}});
  filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{3}));
  EXPECT_EQ(filled->suspect_node, "b");
  EXPECT_EQ(filled->detail, "waited 30 s; not arrived: 3@b no progress report yet");
}

TEST_F(SymptomIntakeTest, ANodeThatDoesNotAnswerHasItsRanksCountedUnreachable) {
  setNodes();
  progress(0, 5);
  progress(1, 5);
  auto filled = take(allreduceTimeout(1));  // b never answers
  ASSERT_TRUE(filled.ok()) << refusal(filled);
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(filled->suspect_node, "b");
  EXPECT_EQ(filled->detail,
            "waited 30 s; not arrived: 2@b its node's daemon did not answer; 3@b its node's daemon did not answer");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0],
            "job job-1: the daemon of node b at b:7000 did not answer RankProgress: connection refused; its ranks "
            "count as unreachable");
}

TEST_F(SymptomIntakeTest, OnlyNodesHoldingMembersNotKnownHereAreAsked) {
  setNodes();
  progress(0, 5);
  progress(1, 4);
  // The members are here: no one else is asked; the reporter is no member
  // of its own wait.
  auto filled = take(allreduceTimeout(0, {0, 1}));
  ASSERT_TRUE(filled.ok());
  EXPECT_TRUE(network_.calls.empty());
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{1}));
  filled = take(allreduceTimeout(1, {0, 1}));
  ASSERT_TRUE(filled.ok());
  EXPECT_TRUE(filled->suspect_ranks.empty());
  EXPECT_TRUE(network_.calls.empty());
}

TEST_F(SymptomIntakeTest, ThisDaemonsOwnNodeIsNotAskedForARankNotYetRegistered) {
  // The ranks here did not say how they reach this daemon: its own socket,
  // spelt otherwise in the node list, tells node a is this daemon.
  for (uint32_t rank : {0u, 1u}) {
    RankRegistration r = registration(rank, 100 + static_cast<pid_t>(rank));
    r.endpoint.clear();
    ASSERT_TRUE(jobs_.registerRank(r).ok());
  }
  ASSERT_TRUE(jobs_.setNodes(kJob, {{"a", "unix:/run/nodekeeper/a.sock", {0, 1, 2}}, {"b", "b:7000", {3}}}, kNow).ok());
  progress(0, 5);
  progress(1, 5);
  network_.answer("b", {kNow, {remoteRank(3, 5, kNow)}});
  auto filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  ASSERT_EQ(network_.calls.size(), 1u);
  EXPECT_EQ(network_.calls[0].nodes, (std::vector<std::string>{"b"}));
  EXPECT_EQ(filled->detail,
            "waited 30 s; every member known has entered collective 5 of world and reports progress; no daemon "
            "reported rank 2");
}

TEST_F(SymptomIntakeTest, AnEndpointThisDaemonIsKnownByIsNotAsked) {
  // --listen names this daemon too: a node list that gives it for node b
  // means b is this daemon.
  SymptomIntake::Options o = options();
  o.peer_endpoint = "b:7000";
  SymptomIntake listening(jobs_, network_, o);
  setNodes();
  progress(0, 5);
  progress(1, 5);
  auto filled = listening.take(allreduceTimeout(0), std::nullopt, kNow);
  ASSERT_TRUE(filled.ok());
  EXPECT_TRUE(network_.calls.empty());
  EXPECT_TRUE(filled->suspect_ranks.empty());
  EXPECT_EQ(filled->detail,
            "waited 30 s; every member known has entered collective 5 of world and reports progress; no daemon "
            "reported ranks 2-3");
}

TEST_F(SymptomIntakeTest, MembersNoDaemonReportedAreNamedNotAccused) {
  progress(0, 5);
  progress(1, 5);
  // No node list yet: nobody to ask.
  auto filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  EXPECT_TRUE(network_.calls.empty());
  EXPECT_TRUE(filled->suspect_ranks.empty());
  EXPECT_EQ(filled->detail,
            "waited 30 s; every member known has entered collective 5 of world and reports progress; no daemon "
            "reported ranks 2-3 (this daemon has no node list for the job: SetJobNodes)");

  setNodes();
  network_.answer("b", {kNow, {remoteRank(2, 4, kNow)}});
  filled = take(allreduceTimeout(0));
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->suspect_ranks, (std::vector<uint32_t>{2}));
  EXPECT_EQ(filled->detail, "waited 30 s; not arrived: 2@b entered 4 of 5 collectives of world; no daemon reported rank 3");
}

TEST_F(SymptomIntakeTest, ADetailNamesEightLaggardsAndCountsTheRest) {
  // Job "big": rank 0 here, ranks 1 to 11 on node c, which does not answer.
  processes_.set(200, ProcessState::kSleeping);
  RankRegistration r = registration(0, 200, 12);
  r.job_id = "big";
  ASSERT_TRUE(jobs_.registerRank(r).ok());
  ASSERT_TRUE(jobs_.setNodes("big", {{"a", "unix:/run/nodekeeper/a.sock", {0}},
                                     {"c", "c:7000", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}}, kNow).ok());
  SymptomRecord s = allreduceTimeout(0, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  s.job_id = "big";
  s.detail.clear();
  auto filled = take(s);
  ASSERT_TRUE(filled.ok()) << refusal(filled);
  EXPECT_EQ(filled->suspect_ranks.size(), 11u);
  EXPECT_EQ(filled->suspect_node, "c");
  std::string expected = "not arrived: ";
  for (uint32_t rank = 1; rank <= 8; ++rank)
    expected += (rank > 1 ? "; " : "") + std::to_string(rank) + "@c its node's daemon did not answer";
  EXPECT_EQ(filled->detail, expected + "; and 3 more");
}

}  // namespace
}  // namespace nk
