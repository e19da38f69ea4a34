#include "cli/faults_formatter.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <time.h>

#include <csignal>

#include <nlohmann/json.hpp>

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;

constexpr int64_t kSecond = 1000000000;
// 2024-05-01 12:00:01.123 UTC
constexpr int64_t kThen = 1714564801LL * kSecond + 123000000;

class FaultsFormatterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

pb::JobList sampleJobs() {
  pb::JobList jobs;
  pb::Job* job = jobs.add_jobs();
  job->set_job_id("job-1");
  job->set_uid(1000);
  job->set_size(4);
  job->set_program("lulesh");
  job->set_start_ns(kThen - kSecond);
  job->set_energy_j(1530.0);
  for (auto [name, first] : {std::pair{"a", 0u}, std::pair{"b", 2u}}) {
    pb::JobNode* node = job->add_nodes();
    node->set_node(name);
    node->set_endpoint(std::string("unix:/run/") + name + ".sock");
    node->add_ranks(first);
    node->add_ranks(first + 1);
  }
  for (uint32_t r : {0u, 1u}) {
    pb::JobRank* rank = job->add_ranks();
    rank->set_rank(r);
    rank->set_node("a");
    rank->set_pid(4000 + static_cast<int>(r));
    rank->set_process_state(r == 0 ? "running" : "stopped");
    rank->set_last_report_ns(r == 0 ? kThen : 0);
  }
  pb::Job* empty = jobs.add_jobs();
  empty->set_job_id("job-2");
  empty->set_uid(0);
  empty->set_size(1);
  empty->set_start_ns(kThen);
  empty->set_end_ns(kThen + 60 * kSecond);
  empty->set_end(pb::JOB_END_COMPLETED);
  empty->set_end_detail("exit 0");
  empty->set_energy_j(12.0);
  return jobs;
}

pb::Symptom sampleSymptom() {
  pb::Symptom s;
  s.set_symptom_id(3);
  s.set_job_id("job-1");
  s.set_kind(pb::SYMPTOM_KIND_RESPONSE_TIMEOUT);
  s.set_reporter_node("a");
  s.set_reporter_rank(1);
  s.set_suspect_node("b");
  s.add_suspect_ranks(3);
  s.set_operation("MPI_Allreduce");
  s.set_timestamp_ns(kThen);
  s.set_detail("not arrived: 3@b entered 4 of 5 collectives of world");
  s.set_communicator("world");
  s.set_collective_seq(5);
  for (uint32_t r : {0u, 1u, 2u, 3u}) s.add_communicator_members(r);
  s.set_waited_s(5.04);
  return s;
}

TEST_F(FaultsFormatterTest, JobsTextHasARowPerJobAndALinePerLocalRank) {
  std::string text = FaultsFormatter::jobsText(sampleJobs(), kThen + 2 * kSecond + 300000000);
  EXPECT_EQ(text,
            "JOB     UID  SIZE  PROGRAM  START                END                  HOW                  ENERGY  NODES\n"
            "job-1  1000     4  lulesh   2024-05-01 12:00:00  -                    running             1.53 kJ  a,b\n"
            "    rank 0  a  pid 4000  running  reported 2.3 s ago\n"
            "    rank 1  a  pid 4001  stopped  reported never\n"
            "job-2     0     1  -        2024-05-01 12:00:01  2024-05-01 12:01:01  completed (exit 0)   12.0 J  -\n")
      << text;
  EXPECT_EQ(FaultsFormatter::jobsText(pb::JobList(), 0),
            "No MPI jobs (their ranks register through the PMPI agent).\n");
}

TEST_F(FaultsFormatterTest, ManyNodesAreAbbreviated) {
  pb::JobList jobs;
  pb::Job* job = jobs.add_jobs();
  job->set_job_id("big");
  for (int i = 0; i < 6; ++i) job->add_nodes()->set_node("n" + std::to_string(i));
  EXPECT_NE(FaultsFormatter::jobsText(jobs, 0).find("n0,n1,n2,n3 +2"), std::string::npos);
}

TEST_F(FaultsFormatterTest, JobsJsonHasEveryField) {
  auto json = nlohmann::json::parse(FaultsFormatter::jobsJson(sampleJobs()));
  ASSERT_EQ(json["jobs"].size(), 2u);
  const auto& job = json["jobs"][0];
  EXPECT_EQ(job["job_id"], "job-1");
  EXPECT_EQ(job["uid"], 1000);
  EXPECT_EQ(job["size"], 4);
  ASSERT_EQ(job["nodes"].size(), 2u);
  EXPECT_EQ(job["nodes"][1]["node"], "b");
  EXPECT_EQ(job["nodes"][1]["endpoint"], "unix:/run/b.sock");
  EXPECT_EQ(job["nodes"][1]["ranks"], nlohmann::json::array({2, 3}));
  ASSERT_EQ(job["ranks"].size(), 2u);
  EXPECT_EQ(job["ranks"][1]["rank"], 1);
  EXPECT_EQ(job["ranks"][1]["pid"], 4001);
  EXPECT_EQ(job["ranks"][1]["process_state"], "stopped");
  EXPECT_EQ(job["ranks"][0]["last_report_ns"], kThen);
  EXPECT_TRUE(json["jobs"][1]["ranks"].empty());
  EXPECT_EQ(job["program"], "lulesh");
  EXPECT_EQ(job["start_ns"], kThen - kSecond);
  EXPECT_EQ(job["end_ns"], 0);
  EXPECT_EQ(job["end"], "running");
  EXPECT_EQ(job["energy_j"], 1530.0);
  const auto& ended = json["jobs"][1];
  EXPECT_EQ(ended["end"], "completed");
  EXPECT_EQ(ended["end_detail"], "exit 0");
  EXPECT_EQ(ended["end_ns"], kThen + 60 * kSecond);
  EXPECT_EQ(ended["energy_j"], 12.0);
  EXPECT_EQ(ended["source"], "");
  EXPECT_EQ(ended["settings"]["power_budget_mw"], 0);
  EXPECT_EQ(ended["nodes_from"], "");
}

TEST_F(FaultsFormatterTest, ACancelledJobsEndedRanksShowHowItEnded) {
  pb::JobList jobs = sampleJobs();
  pb::Job* job = jobs.mutable_jobs(0);
  job->set_cancelled_by_signal(SIGINT);
  job->mutable_ranks(0)->set_process_state("gone");
  std::string text = FaultsFormatter::jobsText(jobs, kThen + 2 * kSecond + 300000000);
  EXPECT_NE(text.find("4000  cancelled (SIGINT)"), std::string::npos) << text;
  EXPECT_NE(text.find("4001  stopped"), std::string::npos) << text;  // still there: its own state
  auto json = nlohmann::json::parse(FaultsFormatter::jobsJson(jobs));
  EXPECT_EQ(json["jobs"][0]["ending"], "cancelled (SIGINT)");
  EXPECT_EQ(json["jobs"][0]["cancelled_by_signal"], SIGINT);
  EXPECT_EQ(json["jobs"][1]["ending"], "");
}

TEST_F(FaultsFormatterTest, ASymptomIsOneLine) {
  EXPECT_EQ(FaultsFormatter::symptomLine(sampleSymptom()),
            "2024-05-01 12:00:01.123  job-1  response_timeout  rank 1@a  suspect 3@b  MPI_Allreduce (world #5)  "
            "waited 5.0 s  not arrived: 3@b entered 4 of 5 collectives of world\n");
  pb::Symptom p2p;
  p2p.set_job_id("j");
  p2p.set_kind(pb::SYMPTOM_KIND_MPI_ERROR);
  p2p.set_reporter_rank(0);
  p2p.set_operation("MPI_Send");
  p2p.set_error_code(6);
  p2p.set_detail("two\nlines");
  EXPECT_EQ(FaultsFormatter::symptomLine(p2p), "-  j  mpi_error  rank 0@?  suspects -  MPI_Send  error 6  two lines\n");
  p2p.add_suspect_ranks(4);
  p2p.add_suspect_ranks(5);
  p2p.add_suspect_ranks(9);
  p2p.set_suspect_node("b,c");
  EXPECT_NE(FaultsFormatter::symptomLine(p2p).find("suspects 4-5,9@b,c"), std::string::npos);
}

TEST_F(FaultsFormatterTest, ASymptomTheDaemonRaisedSaysSo) {
  pb::Symptom stopped;
  stopped.set_job_id("job-1");
  stopped.set_kind(pb::SYMPTOM_KIND_HEARTBEAT_LOST);
  stopped.set_reporter_node("a");
  stopped.set_reporter_rank(UINT32_MAX);
  stopped.set_suspect_node("a");
  stopped.add_suspect_ranks(1);
  stopped.set_timestamp_ns(kThen);
  stopped.set_detail("rank 1's process is stopped");
  EXPECT_EQ(FaultsFormatter::symptomLine(stopped),
            "2024-05-01 12:00:01.123  job-1  heartbeat_lost  daemon@a  suspect 1@a  rank 1's process is stopped\n");
  auto json = nlohmann::json::parse(FaultsFormatter::symptomJson(stopped));
  EXPECT_EQ(json["reporter"], "daemon");
  EXPECT_EQ(json["reporter_node"], "a");
  EXPECT_EQ(json["kind"], "heartbeat_lost");
  EXPECT_EQ(json["job_id"], "job-1");
  EXPECT_EQ(nlohmann::json::parse(FaultsFormatter::symptomJson(sampleSymptom()))["reporter"], "rank");
  auto all = nlohmann::json::parse(FaultsFormatter::symptomsJson({sampleSymptom(), stopped}));
  EXPECT_EQ(all["symptoms"][1]["reporter"], "daemon");
}

TEST_F(FaultsFormatterTest, SymptomJsonIsOneLineOfNdjson) {
  std::string line = FaultsFormatter::symptomJson(sampleSymptom());
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto json = nlohmann::json::parse(line);
  EXPECT_EQ(json["symptom_id"], 3);
  EXPECT_EQ(json["kind"], "response_timeout");
  EXPECT_EQ(json["suspect_ranks"], nlohmann::json::array({3}));
  EXPECT_EQ(json["suspect_node"], "b");
  EXPECT_EQ(json["collective_seq"], 5);
  EXPECT_EQ(json["communicator_members"].size(), 4u);
  EXPECT_DOUBLE_EQ(json["waited_s"].get<double>(), 5.04);
  EXPECT_EQ(json["timestamp_ns"], kThen);

  auto all = nlohmann::json::parse(FaultsFormatter::symptomsJson({sampleSymptom(), sampleSymptom()}));
  EXPECT_EQ(all["symptoms"].size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(FaultsFormatter::symptomsJson({}))["symptoms"].size(), 0u);
}

pb::FaultReport sampleFault() {
  pb::FaultReport f;
  f.set_fault_id(7);
  f.set_job_id("job-1");
  f.set_kind(pb::FAULT_KIND_PROCESS_HANG);
  f.set_node("b");
  for (uint32_t r : {0u, 1u, 2u, 3u, 7u}) f.add_ranks(r);
  f.add_evidence("response_timeout from rank 1@a: MPI_Allreduce (world #5)");
  f.add_evidence("status probe of b: rank 3 stopped");
  f.add_evidence("log probe of b: 2 pending");
  f.set_first_symptom_ns(kThen);
  f.set_localised_ns(kThen + 1 * kSecond + 234567890);
  f.set_localised_by("a");
  f.set_uid(1000);
  return f;
}

TEST_F(FaultsFormatterTest, FaultsTextHasARowPerFault) {
  pb::FaultReport down;
  down.set_fault_id(12);
  down.set_job_id("job-2");
  down.set_kind(pb::FAULT_KIND_NODE_DOWN);
  down.set_node("c");
  down.set_localised_by("a");
  down.set_first_symptom_ns(kThen);
  down.set_localised_ns(kThen + 250000000);
  down.add_evidence("two\nlines");
  pb::FaultReport bare;  // nothing set: every cell still says something
  bare.set_fault_id(13);
  std::string text = FaultsFormatter::faultsText({sampleFault(), down, bare});
  EXPECT_EQ(text,
            "ID  JOB    KIND          NODE  RANKS   AFTER  BY  EVIDENCE\n"
            " 7  job-1  process_hang  b     0-3,7  1.235s  a   response_timeout from rank 1@a: MPI_Allreduce (world #5) "
            "(+2 more)\n"
            "12  job-2  node_down     c     -      0.250s  a   two lines\n"
            "13  -      unspecified   -     -           -  -   -\n")
      << text;
}

TEST_F(FaultsFormatterTest, NoFaults) {
  EXPECT_EQ(FaultsFormatter::faultsText({}), "No faults reported.\n");
  EXPECT_EQ(FaultsFormatter::faultsText({}, "job-9"), "No faults reported for job job-9.\n");
  EXPECT_EQ(FaultsFormatter::faultsJson({}), "[]\n");
}

TEST_F(FaultsFormatterTest, AFaultIsOneLineWhenWatched) {
  EXPECT_EQ(FaultsFormatter::faultLine(sampleFault()),
            "2024-05-01 12:00:02.357  fault 7  job-1  process_hang  node b  ranks 0-3,7  after 1.235s  by a  "
            "response_timeout from rank 1@a: MPI_Allreduce (world #5) (+2 more)\n");
}

TEST_F(FaultsFormatterTest, FaultsJsonIsAnArrayWithExactlyTheKeys) {
  std::string text = FaultsFormatter::faultsJson({sampleFault(), sampleFault()});
  auto json = nlohmann::json::parse(text);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 2u);
  const auto& f = json[0];
  std::vector<std::string> keys;
  const auto ordered = nlohmann::ordered_json::parse(text);
  for (const auto& item : ordered[0].items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"fault_id", "job_id", "kind", "node", "ranks", "evidence",
                                            "detected_after_s", "first_symptom_ns", "localised_ns",
                                            "localised_by"}));
  EXPECT_EQ(f["fault_id"], 7);
  EXPECT_EQ(f["job_id"], "job-1");
  EXPECT_EQ(f["kind"], "process_hang");
  EXPECT_EQ(f["node"], "b");
  EXPECT_EQ(f["ranks"], nlohmann::json::array({0, 1, 2, 3, 7}));
  ASSERT_EQ(f["evidence"].size(), 3u);
  EXPECT_EQ(f["evidence"][2], "log probe of b: 2 pending");
  EXPECT_TRUE(f["detected_after_s"].is_number_float());
  EXPECT_DOUBLE_EQ(f["detected_after_s"].get<double>(), 1.23456789);
  EXPECT_EQ(f["first_symptom_ns"], kThen);
  EXPECT_EQ(f["localised_ns"], kThen + 1 * kSecond + 234567890);
  EXPECT_EQ(f["localised_by"], "a");
}

TEST_F(FaultsFormatterTest, FaultJsonIsOneLineOfNdjson) {
  std::string line = FaultsFormatter::faultJson(sampleFault());
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  auto json = nlohmann::json::parse(line);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json["fault_id"], 7);
  EXPECT_EQ(json["ranks"].size(), 5u);
  EXPECT_EQ(json.size(), 10u);
}

TEST_F(FaultsFormatterTest, DetectedAfterIsFromTheFirstSymptom) {
  pb::FaultReport f = sampleFault();
  EXPECT_DOUBLE_EQ(FaultsFormatter::detectedAfterS(f), 1.23456789);
  f.set_localised_ns(f.first_symptom_ns());
  EXPECT_DOUBLE_EQ(FaultsFormatter::detectedAfterS(f), 0);
  f.set_localised_ns(kThen - kSecond);  // clocks the wrong way round
  EXPECT_DOUBLE_EQ(FaultsFormatter::detectedAfterS(f), 0);
  f = sampleFault();
  f.set_first_symptom_ns(0);
  EXPECT_DOUBLE_EQ(FaultsFormatter::detectedAfterS(f), 0);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(FaultsFormatter::faultJson(f))["detected_after_s"].get<double>(), 0);
  EXPECT_NE(FaultsFormatter::faultsText({f}).find("  -  a  "), std::string::npos);
  f = sampleFault();
  f.set_localised_ns(0);
  EXPECT_DOUBLE_EQ(FaultsFormatter::detectedAfterS(f), 0);
}

TEST_F(FaultsFormatterTest, FaultKindNames) {
  EXPECT_EQ(FaultsFormatter::faultKindName(pb::FAULT_KIND_NODE_DOWN), "node_down");
  EXPECT_EQ(FaultsFormatter::faultKindName(pb::FAULT_KIND_PROCESS_HANG), "process_hang");
  EXPECT_EQ(FaultsFormatter::faultKindName(pb::FAULT_KIND_PROCESS_CRASH), "process_crash");
  EXPECT_EQ(FaultsFormatter::faultKindName(pb::FAULT_KIND_NETWORK_DEGRADATION), "network_degraded");
  EXPECT_EQ(FaultsFormatter::faultKindName(pb::FAULT_KIND_OVERHEATING), "overheating");
  EXPECT_EQ(FaultsFormatter::faultKindName(pb::FAULT_KIND_UNSPECIFIED), "unspecified");
  EXPECT_EQ(FaultsFormatter::faultKindName(static_cast<pb::FaultKind>(99)), "unspecified");
  pb::FaultReport f = sampleFault();
  f.set_kind(pb::FAULT_KIND_NETWORK_DEGRADATION);
  EXPECT_EQ(nlohmann::json::parse(FaultsFormatter::faultJson(f))["kind"], "network_degraded");
}

TEST_F(FaultsFormatterTest, AgesAndTimes) {
  EXPECT_EQ(FaultsFormatter::ageText(0, kThen), "never");
  EXPECT_EQ(FaultsFormatter::ageText(kThen, kThen - kSecond), "0.0 s ago");  // clocks a little apart
  EXPECT_EQ(FaultsFormatter::ageText(kThen, kThen + 150 * kSecond), "2 min ago");
  EXPECT_EQ(FaultsFormatter::ageText(kThen, kThen + 5400 * kSecond), "1.5 h ago");
  EXPECT_EQ(FaultsFormatter::timeText(kThen), "2024-05-01 12:00:01.123");
  EXPECT_EQ(FaultsFormatter::kindName(pb::SYMPTOM_KIND_POWER_ALARM), "power_alarm");
  EXPECT_EQ(FaultsFormatter::kindName(pb::SYMPTOM_KIND_RANK_EXITED), "rank_exited");
}

}  // namespace
}  // namespace nk::cli
