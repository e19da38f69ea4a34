#include "faults/fault_report_log.h"

#include <gtest/gtest.h>

#include <thread>

namespace nk {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

FaultRecord fault(std::string job, std::string node, FaultKind kind = FaultKind::kNodeDown, uid_t uid = 1000) {
  FaultRecord f;
  f.job_id = std::move(job);
  f.uid = uid;
  f.kind = kind;
  f.node = std::move(node);
  f.ranks = {3};
  f.evidence = {"response probe: 0 of 3 attempts answered"};
  f.localised_by = "n1";
  return f;
}

std::vector<uint64_t> ids(const FaultReportLog::Batch& batch) {
  std::vector<uint64_t> out;
  for (const FaultRecord& f : batch.faults) out.push_back(f.fault_id);
  return out;
}

TEST(FaultReportLog, NumbersFaultsFromOneAndKeepsTheirFields) {
  FaultReportLog log;
  EXPECT_EQ(log.size(), 0u);
  auto a = log.publish(fault("j1", "n4"));
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->fault_id, 1u);
  EXPECT_EQ(a->node, "n4");
  EXPECT_EQ(a->kind, FaultKind::kNodeDown);
  EXPECT_EQ(a->localised_by, "n1");
  auto b = log.publish(fault("j1", "n5", FaultKind::kProcessHang));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->fault_id, 2u);
  EXPECT_EQ(log.size(), 2u);

  FaultReportLog::Batch all = log.since(0, {});
  EXPECT_EQ(ids(all), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(all.last_id, 2u);
  EXPECT_EQ(all.faults[1].node, "n5");
  EXPECT_EQ(all.faults[1].kind, FaultKind::kProcessHang);
  EXPECT_EQ(all.faults[1].ranks, (std::vector<uint32_t>{3}));
  EXPECT_EQ(all.faults[1].uid, 1000u);
}

TEST(FaultReportLog, DropsASecondReportOfTheSameKindAboutTheSameNodeOfAJob) {
  FaultReportLog log;
  ASSERT_TRUE(log.publish(fault("j1", "n4", FaultKind::kProcessHang)));
  FaultRecord again = fault("j1", "n4", FaultKind::kProcessHang);
  again.localised_by = "n0";  // from another localiser: still the same fault
  again.ranks = {7};
  EXPECT_FALSE(log.publish(again).has_value());
  // A different kind, node or job is a different fault, and a dropped
  // duplicate uses up no id.
  auto crash = log.publish(fault("j1", "n4", FaultKind::kProcessCrash));
  ASSERT_TRUE(crash);
  EXPECT_EQ(crash->fault_id, 2u);
  auto other_node = log.publish(fault("j1", "n40", FaultKind::kProcessHang));
  ASSERT_TRUE(other_node);
  EXPECT_EQ(other_node->fault_id, 3u);
  auto other_job = log.publish(fault("j2", "n4", FaultKind::kProcessHang));
  ASSERT_TRUE(other_job);
  EXPECT_EQ(other_job->fault_id, 4u);
  EXPECT_EQ(log.size(), 4u);
  EXPECT_EQ(ids(log.since(0, {})), (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST(FaultReportLog, NodeDownSuppressesLaterReportsOfOtherKindsAboutThatNode) {
  FaultReportLog log;
  ASSERT_TRUE(log.publish(fault("j1", "n4", FaultKind::kProcessHang)));  // before: stays
  ASSERT_TRUE(log.publish(fault("j1", "n4", FaultKind::kNodeDown)));     // after a hang: reported
  EXPECT_FALSE(log.publish(fault("j1", "n4", FaultKind::kProcessCrash)));
  EXPECT_FALSE(log.publish(fault("j1", "n4", FaultKind::kOverheating)));
  EXPECT_FALSE(log.publish(fault("j1", "n4", FaultKind::kNodeDown)));
  // Only that node of that job.
  EXPECT_TRUE(log.publish(fault("j2", "n4", FaultKind::kProcessCrash)));
  EXPECT_TRUE(log.publish(fault("j1", "n5", FaultKind::kProcessCrash)));

  FaultReportLog::Batch all = log.since(0, {});
  ASSERT_EQ(all.faults.size(), 4u);
  EXPECT_EQ(all.faults[0].kind, FaultKind::kProcessHang);
  EXPECT_EQ(all.faults[1].kind, FaultKind::kNodeDown);
  EXPECT_EQ(all.faults[2].job_id, "j2");
  EXPECT_EQ(all.faults[3].node, "n5");
  EXPECT_EQ(all.last_id, 4u);
}

TEST(FaultReportLog, ReportedMeansAnyKindAboutExactlyThatNodeOfThatJob) {
  FaultReportLog log;
  EXPECT_FALSE(log.reported("j1", "n10"));
  log.publish(fault("j1", "n10", FaultKind::kOverheating));
  EXPECT_TRUE(log.reported("j1", "n10"));
  EXPECT_FALSE(log.reported("j1", "n1"));  // a prefix of a reported node
  EXPECT_FALSE(log.reported("j1", "n100"));
  EXPECT_FALSE(log.reported("j2", "n10"));
  EXPECT_FALSE(log.reported("j", "n10"));
}

TEST(FaultReportLog, FiltersByJobAndUid) {
  FaultReportLog log;
  log.publish(fault("j1", "n1", FaultKind::kNodeDown, 1000));  // 1
  log.publish(fault("j2", "n1", FaultKind::kNodeDown, 1001));  // 2
  log.publish(fault("j1", "n2", FaultKind::kNodeDown, 1000));  // 3
  log.publish(fault("j3", "n1", FaultKind::kNodeDown, 1000));  // 4

  FaultReportLog::Filter j1;
  j1.job_id = "j1";
  EXPECT_EQ(ids(log.since(0, j1)), (std::vector<uint64_t>{1, 3}));
  FaultReportLog::Filter u1000;
  u1000.uid = 1000;
  EXPECT_EQ(ids(log.since(0, u1000)), (std::vector<uint64_t>{1, 3, 4}));
  FaultReportLog::Filter both;
  both.job_id = "j2";
  both.uid = 1000;
  FaultReportLog::Batch none = log.since(0, both);
  EXPECT_TRUE(none.faults.empty());
  // The faults the filter passed over are behind the watcher all the same:
  // it does not scan them again.
  EXPECT_EQ(none.last_id, 4u);
  both.uid = 1001;
  EXPECT_EQ(ids(log.since(0, both)), (std::vector<uint64_t>{2}));
}

TEST(FaultReportLog, SinceStartsAfterTheIdAndLimitCountsWhatItReturns) {
  FaultReportLog log;
  for (int i = 0; i < 5; ++i) log.publish(fault(i % 2 == 0 ? "j1" : "j2", "n" + std::to_string(i)));
  // ids 1..5; j1: 1, 3, 5; j2: 2, 4
  EXPECT_EQ(ids(log.since(2, {})), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(log.since(2, {}).last_id, 5u);
  FaultReportLog::Batch nothing = log.since(5, {});
  EXPECT_TRUE(nothing.faults.empty());
  EXPECT_EQ(nothing.last_id, 5u);
  EXPECT_EQ(log.since(9, {}).last_id, 9u);  // ahead of the log: stays where the caller is

  FaultReportLog::Batch two = log.since(0, {}, 2);
  EXPECT_EQ(ids(two), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(two.last_id, 2u);

  // Paging through one job: each page ends at the last fault it holds, the
  // next starts after it and passes over the other job's faults.
  FaultReportLog::Filter j1;
  j1.job_id = "j1";
  FaultReportLog::Batch page1 = log.since(0, j1, 1);
  EXPECT_EQ(ids(page1), (std::vector<uint64_t>{1}));
  EXPECT_EQ(page1.last_id, 1u);
  FaultReportLog::Batch page2 = log.since(page1.last_id, j1, 1);
  EXPECT_EQ(ids(page2), (std::vector<uint64_t>{3}));
  EXPECT_EQ(page2.last_id, 3u);
  FaultReportLog::Batch page3 = log.since(page2.last_id, j1, 1);
  EXPECT_EQ(ids(page3), (std::vector<uint64_t>{5}));
  EXPECT_EQ(page3.last_id, 5u);
  FaultReportLog::Batch page4 = log.since(page3.last_id, j1, 1);
  EXPECT_TRUE(page4.faults.empty());
  EXPECT_EQ(page4.last_id, 5u);

  EXPECT_TRUE(log.since(0, {}, 0).faults.empty());
  EXPECT_EQ(log.since(0, {}, 0).last_id, 0u);
}

TEST(FaultReportLog, BoundDropsTheOldestFirst) {
  FaultReportLog log(3);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(log.publish(fault("j1", "n" + std::to_string(i))));
  EXPECT_EQ(log.size(), 3u);
  FaultReportLog::Batch all = log.since(0, {});
  EXPECT_EQ(ids(all), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(all.faults[0].node, "n3");
  EXPECT_EQ(all.last_id, 5u);
  // Ids go on from where they were; a dropped fault is still known as reported.
  auto six = log.publish(fault("j1", "n6"));
  ASSERT_TRUE(six);
  EXPECT_EQ(six->fault_id, 6u);
  EXPECT_EQ(ids(log.since(0, {})), (std::vector<uint64_t>{4, 5, 6}));
  EXPECT_FALSE(log.publish(fault("j1", "n1")).has_value());
  EXPECT_TRUE(log.reported("j1", "n1"));
  EXPECT_EQ(log.size(), 3u);
}

TEST(FaultReportLog, CountsPublishedByKindThoseDroppedForSpaceAndNotTheRepeats) {
  FaultReportLog log(2);
  for (int i = 1; i <= 4; ++i) log.publish(fault("j1", "n" + std::to_string(i)));
  log.publish(fault("j2", "n1", FaultKind::kProcessHang));
  log.publish(fault("j2", "n1", FaultKind::kProcessHang));  // said already: not published
  auto counts = log.publishedByKind();
  EXPECT_EQ(counts[static_cast<size_t>(FaultKind::kNodeDown)], 4u);
  EXPECT_EQ(counts[static_cast<size_t>(FaultKind::kProcessHang)], 1u);
  EXPECT_EQ(counts[static_cast<size_t>(FaultKind::kOverheating)], 0u);
}

TEST(FaultReportLog, WaitForNewerReturnsAtOnceWhenThereIsOne) {
  FaultReportLog log;
  log.publish(fault("j1", "n1"));
  auto start = Clock::now();
  EXPECT_TRUE(log.waitForNewer(0, start + 10s));
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(FaultReportLog, WaitForNewerTimesOut) {
  FaultReportLog log;
  log.publish(fault("j1", "n1"));
  auto start = Clock::now();
  EXPECT_FALSE(log.waitForNewer(1, start + 100ms));
  auto waited = Clock::now() - start;
  EXPECT_GE(waited, 100ms);
  EXPECT_LT(waited, 5s);
  EXPECT_FALSE(log.waitForNewer(1, Clock::now() - 1s));  // a deadline gone by
}

TEST(FaultReportLog, WaitForNewerWakesOnPublish) {
  FaultReportLog log;
  log.publish(fault("j1", "n1"));
  auto start = Clock::now();
  std::thread publisher([&] {
    std::this_thread::sleep_for(50ms);
    log.publish(fault("j1", "n1"));  // a duplicate: dropped, wakes nobody for good
    std::this_thread::sleep_for(50ms);
    log.publish(fault("j1", "n2"));
  });
  bool woke = log.waitForNewer(1, start + 20s);
  auto waited = Clock::now() - start;
  publisher.join();
  EXPECT_TRUE(woke);
  EXPECT_GE(waited, 100ms);  // not by the dropped duplicate at 50 ms
  EXPECT_LT(waited, 10s);
  EXPECT_EQ(ids(log.since(1, {})), (std::vector<uint64_t>{2}));
}

}  // namespace
}  // namespace nk
