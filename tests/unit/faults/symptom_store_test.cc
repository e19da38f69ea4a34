#include "faults/symptom_store.h"

#include <gtest/gtest.h>

#include <thread>

namespace nk {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

SymptomRecord symptom(std::string job, uid_t uid = 1000, std::string detail = "") {
  SymptomRecord s;
  s.job_id = std::move(job);
  s.uid = uid;
  s.kind = SymptomKind::kResponseTimeout;
  s.detail = std::move(detail);
  return s;
}

std::vector<uint64_t> ids(const SymptomStore::Batch& batch) {
  std::vector<uint64_t> out;
  for (const auto& s : batch.symptoms) out.push_back(s.symptom_id);
  return out;
}

TEST(SymptomStore, NumbersSymptomsFromOneAndFiltersByJobAndUser) {
  SymptomStore store;
  EXPECT_EQ(store.append(symptom("j1")), 1u);
  EXPECT_EQ(store.append(symptom("j2", 2000)), 2u);
  EXPECT_EQ(store.append(symptom("j1")), 3u);
  EXPECT_EQ(store.lastId(), 3u);

  auto all = store.since(0, {});
  EXPECT_EQ(ids(all), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(all.last_id, 3u);
  EXPECT_EQ(all.symptoms[1].job_id, "j2");
  EXPECT_EQ(ids(store.since(0, {.job_id = "j1"})), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(ids(store.since(0, {.uid = 2000})), (std::vector<uint64_t>{2}));
  EXPECT_TRUE(store.since(0, {.job_id = "j2", .uid = 1000}).symptoms.empty());
  auto newer = store.since(1, {});
  EXPECT_EQ(ids(newer), (std::vector<uint64_t>{2, 3}));
  // Nothing passes the filter, yet the watcher moves on.
  auto none = store.since(0, {.job_id = "j9"});
  EXPECT_TRUE(none.symptoms.empty());
  EXPECT_EQ(none.last_id, 3u);
  EXPECT_TRUE(store.since(3, {}).symptoms.empty());
}

TEST(SymptomStore, ALimitedBatchSaysWhereToGoOn) {
  SymptomStore store;
  for (int i = 0; i < 5; ++i) store.append(symptom(i % 2 ? "odd" : "even"));
  auto first = store.since(0, {.job_id = "even"}, 2);
  EXPECT_EQ(ids(first), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(first.last_id, 3u);
  auto rest = store.since(first.last_id, {.job_id = "even"}, 2);
  EXPECT_EQ(ids(rest), (std::vector<uint64_t>{5}));
  EXPECT_EQ(rest.last_id, 5u);
  EXPECT_EQ(store.since(0, {}, 0).last_id, 0u);
}

TEST(SymptomStore, KeepsTheNewestWithinItsCount) {
  SymptomStore store({.max_symptoms = 3});
  for (int i = 0; i < 5; ++i) store.append(symptom("j"));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.dropped(), 2u);
  EXPECT_EQ(ids(store.since(0, {})), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(ids(store.since(1, {})), (std::vector<uint64_t>{3, 4, 5}));  // 2 is gone
  EXPECT_EQ(ids(store.since(3, {})), (std::vector<uint64_t>{4, 5}));
}

TEST(SymptomStore, CountsByKindAtIntakeSoDroppingForSpaceTakesNothingOff) {
  SymptomStore store({.max_symptoms = 2});
  for (int i = 0; i < 4; ++i) store.append(symptom("j"));
  SymptomRecord error = symptom("j");
  error.kind = SymptomKind::kMpiError;
  store.append(error);
  SymptomRecord odd = symptom("j");
  odd.kind = static_cast<SymptomKind>(99);
  store.append(odd);
  auto counts = store.appendedByKind();
  EXPECT_EQ(counts[static_cast<size_t>(SymptomKind::kResponseTimeout)], 4u);
  EXPECT_EQ(counts[static_cast<size_t>(SymptomKind::kMpiError)], 1u);
  EXPECT_EQ(counts[static_cast<size_t>(SymptomKind::kUnspecified)], 1u);
  EXPECT_EQ(store.size(), 2u);
}

TEST(SymptomStore, KeepsTheNewestWithinItsMemory) {
  const size_t one = symptom("j", 1000, std::string(1000, 'x')).approximateBytes();
  SymptomStore store({.max_symptoms = 100, .max_bytes = one * 2 + one / 2});
  for (int i = 0; i < 4; ++i) store.append(symptom("j", 1000, std::string(1000, 'x')));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.dropped(), 2u);
  // One larger than the whole budget is still kept, alone.
  store.append(symptom("j", 1000, std::string(one * 4, 'y')));
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(ids(store.since(0, {})), (std::vector<uint64_t>{5}));
}

TEST(SymptomStore, WaitForNewerTimesOutOrWakesOnAppend) {
  SymptomStore store;
  store.append(symptom("j"));
  EXPECT_TRUE(store.waitForNewer(0, Clock::now()));  // already there

  auto start = Clock::now();
  EXPECT_FALSE(store.waitForNewer(1, start + 50ms));
  EXPECT_GE(Clock::now() - start, 50ms);

  std::thread writer([&] {
    std::this_thread::sleep_for(30ms);
    store.append(symptom("j"));
  });
  start = Clock::now();
  EXPECT_TRUE(store.waitForNewer(1, start + 5s));
  EXPECT_LT(Clock::now() - start, 4s);
  writer.join();
  EXPECT_EQ(store.lastId(), 2u);
}

TEST(SymptomRecord, DescribesItselfOnOneLine) {
  SymptomRecord s = symptom("job-7");
  s.symptom_id = 4;
  s.reporter_rank = 1;
  s.reporter_node = "a";
  s.operation = "MPI_Allreduce";
  s.communicator = "world";
  s.collective_seq = 5;
  s.waited_s = 2.5;
  s.suspect_ranks = {3, 2, 7};
  s.suspect_node = "b,c";
  EXPECT_EQ(s.describe(),
            "symptom 4 of job job-7: response_timeout reported by rank 1 on a in MPI_Allreduce (collective 5 of "
            "world) after 2.5 s; suspects: ranks 2-3,7 on b,c");
  EXPECT_EQ(formatRankList({5, 1, 2, 2, 3}), "1-3,5");
  EXPECT_EQ(symptomKindName(SymptomKind::kMpiError), "mpi_error");
  EXPECT_FALSE(isKnownSymptomKind(0));
  EXPECT_TRUE(isKnownSymptomKind(5));
  EXPECT_TRUE(isKnownSymptomKind(6));
  EXPECT_EQ(symptomKindName(SymptomKind::kRankExited), "rank_exited");
  EXPECT_FALSE(isKnownSymptomKind(7));
}

}  // namespace
}  // namespace nk
