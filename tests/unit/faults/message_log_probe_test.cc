#include "faults/message_log_probe.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include "fake_process_state_reader.h"
#include "faults/job_registry.h"
#include "wire/message_log.h"

namespace nk {
namespace {

using test::FakeProcessStateReader;

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1000 * kMs;

// A message log in memory, as an agent lays it out in the file it maps.
class LogRegion {
 public:
  explicit LogRegion(uint32_t capacity)
      : words_((wire::MessageLog::regionSize(capacity) + sizeof(uint64_t) - 1) / sizeof(uint64_t)),
        log_(bytes(), capacity) {}

  void add(const char* operation, int64_t start_ns, int64_t end_ns, int32_t outcome = 0, int32_t peer = 1,
           int32_t tag = 7, uint64_t size = 1024) {
    log_.append(operation, peer, tag, size, start_ns, end_ns, outcome);
  }
  std::span<std::byte> bytes() { return std::as_writable_bytes(std::span(words_)); }
  wire::MessageLog& log() { return log_; }

 private:
  std::vector<uint64_t> words_;  // 8-byte aligned, as the log's atomics need
  wire::MessageLog log_;
};

LogFindings read(LogRegion& region, uint32_t rank, int64_t from_ns, int64_t to_ns) {
  LogFindings findings;
  MessageLogProbe::addRegion(region.bytes(), rank, from_ns, to_ns, findings);
  return findings;
}

TEST(MessageLogProbeRegionTest, FailedAndSlowMessagesArePending) {
  LogRegion region(16);
  region.add("MPI_Send", 10 * kSecond, 10 * kSecond + 2 * kMs);
  region.add("MPI_Recv", 11 * kSecond, 11 * kSecond + kMs, 13, 2, 9, 8);  // an MPI error
  region.add("MPI_Recv", 12 * kSecond, 13 * kSecond + kMs, 0, 3);         // over a second
  region.add("MPI_Send", 14 * kSecond, 15 * kSecond, 0, 3);               // exactly a second is not slow

  LogFindings findings = read(region, 5, 0, 0);
  EXPECT_EQ(findings.pending, 2u);
  EXPECT_EQ(findings.entries, (std::vector<std::string>{
                                  "rank 5 MPI_Send peer 1 tag 7 1024 B 2.000 ms rc 0",
                                  "rank 5 MPI_Recv peer 2 tag 9 8 B 1.000 ms rc 13 (pending)",
                                  "rank 5 MPI_Recv peer 3 tag 7 1024 B 1001.000 ms rc 0 (pending)",
                                  "rank 5 MPI_Send peer 3 tag 7 1024 B 1000.000 ms rc 0",
                              }));
  EXPECT_FALSE(findings.answered);  // the caller says whether the node answered
}

TEST(MessageLogProbeRegionTest, OnlyMessagesOverlappingTheWindowCount) {
  LogRegion region(16);
  region.add("MPI_Send", 1 * kSecond, 2 * kSecond, 1);  // ends before the window
  region.add("MPI_Send", 2 * kSecond, 5 * kSecond, 1);  // reaches into it
  region.add("MPI_Send", 6 * kSecond, 7 * kSecond, 1);  // inside
  region.add("MPI_Send", 8 * kSecond, 9 * kSecond, 1);  // starts at its end
  region.add("MPI_Send", 9 * kSecond, 10 * kSecond, 1); // starts after it

  LogFindings findings = read(region, 0, 3 * kSecond, 8 * kSecond);
  EXPECT_EQ(findings.pending, 3u);
  ASSERT_EQ(findings.entries.size(), 3u);
  EXPECT_EQ(findings.entries[0], "rank 0 MPI_Send peer 1 tag 7 1024 B 3000.000 ms rc 1 (pending)");

  // No end: everything from `from` on.
  EXPECT_EQ(read(region, 0, 3 * kSecond, 0).pending, 4u);
  EXPECT_EQ(read(region, 0, 0, 0).pending, 5u);
}

TEST(MessageLogProbeRegionTest, DescribesAThousandMessagesAndCountsAll) {
  LogRegion first(2048), second(256);
  for (int i = 0; i < 900; ++i) first.add("MPI_Isend", i * kMs, i * kMs + 1, 1);
  for (int i = 0; i < 200; ++i) second.add("MPI_Irecv", i * kMs, i * kMs + 1, 1);
  LogFindings findings;
  MessageLogProbe::addRegion(first.bytes(), 0, 0, 0, findings);
  MessageLogProbe::addRegion(second.bytes(), 1, 0, 0, findings);
  EXPECT_EQ(findings.pending, 1100u);
  ASSERT_EQ(findings.entries.size(), MessageLogProbe::kMaxEntries);
  EXPECT_EQ(findings.entries.back().rfind("rank 1 MPI_Irecv", 0), 0u) << findings.entries.back();
}

TEST(MessageLogProbeRegionTest, ARegionThatIsNoMessageLogAddsNothing) {
  std::vector<uint64_t> junk(64, 0x1234);
  LogFindings findings;
  MessageLogProbe::addRegion(std::as_bytes(std::span(junk)), 0, 0, 0, findings);
  MessageLogProbe::addRegion({}, 0, 0, 0, findings);
  EXPECT_TRUE(findings.entries.empty());
  EXPECT_EQ(findings.pending, 0u);
}

class MessageLogProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (pid_t pid : {100, 101, 102}) processes_.set(pid, ProcessState::kSleeping);
    for (uint32_t rank : {0u, 1u}) {
      RankRegistration r;
      r.job_id = "job-1";
      r.rank = rank;
      r.size = 2;
      r.node = "a";
      r.pid = 100 + static_cast<pid_t>(rank);
      r.uid = ::getuid();
      ASSERT_TRUE(jobs_.registerRank(r).ok());
    }
    // A job of another user, whose rank's log path someone else may plant.
    RankRegistration other;
    other.job_id = "job-2";
    other.size = 1;
    other.node = "a";
    other.pid = 102;
    other.uid = ::getuid() + 1;
    ASSERT_TRUE(jobs_.registerRank(other).ok());
  }

  void writeLog(pid_t pid, LogRegion& region) {
    std::ofstream out(probe_.logOf(pid), std::ios::binary);
    auto bytes = region.bytes();
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good());
  }

  FakeProcessStateReader processes_;
  JobRegistry jobs_{processes_};
  nk::test::TempDir dir_{"log-probe"};
  std::vector<std::string> warnings_;
  MessageLogProbe probe_{jobs_, dir_.path(), [this](const std::string& message) { warnings_.push_back(message); }};
};

TEST_F(MessageLogProbeTest, ReadsTheLogFileOfEachRankOfTheJobHere) {
  EXPECT_EQ(probe_.logOf(4242), dir_.path() / "nodekeeper-pmpi-4242.log");
  LogRegion rank1(8);
  rank1.add("MPI_Recv", 5 * kSecond, 7 * kSecond, 0, 0, 3, 64);
  writeLog(101, rank1);
  // Rank 0's agent wrote no log (yet): it adds nothing.
  auto findings = probe_.probe("job-1", 0, 0);
  ASSERT_TRUE(findings.ok()) << findings.error().message;
  EXPECT_TRUE(findings->answered);
  EXPECT_EQ(findings->pending, 1u);
  EXPECT_EQ(findings->entries, (std::vector<std::string>{"rank 1 MPI_Recv peer 0 tag 3 64 B 2000.000 ms rc 0 (pending)"}));

  // A log that does not overlap the window.
  findings = probe_.probe("job-1", 8 * kSecond, 0);
  ASSERT_TRUE(findings.ok());
  EXPECT_EQ(findings->pending, 0u);
  EXPECT_TRUE(findings->entries.empty());
}

// The signal a rank's handler marked before mpirun's SIGKILL overtook its
// report, read from the file it leaves behind; only from a file of the
// rank's own user.
TEST_F(MessageLogProbeTest, TheEndingSignalMarkedInARanksLogIsRead) {
  LogRegion rank0(8);
  rank0.add("MPI_Allreduce", 1 * kSecond, 2 * kSecond);
  writeLog(100, rank0);
  EXPECT_EQ(probe_.endingSignalOf(100, ::getuid()), 0);  // not ending
  rank0.log().endingSignalMark()->store(SIGTERM);
  writeLog(100, rank0);
  EXPECT_EQ(probe_.endingSignalOf(100, ::getuid()), SIGTERM);
  EXPECT_EQ(wire::MessageLog::endingSignal(rank0.bytes()), SIGTERM);
  EXPECT_EQ(probe_.endingSignalOf(100, ::getuid() + 1), 0);  // someone else's file
  EXPECT_EQ(probe_.endingSignalOf(4242, ::getuid()), 0);     // no log
  // Through a symlink: not followed.
  std::filesystem::create_symlink(probe_.logOf(100), probe_.logOf(102));
  EXPECT_EQ(probe_.endingSignalOf(102, ::getuid()), 0);
}

// /dev/shm is anyone's: a log at a rank's path that its job's user does not
// own (planted to blame another rank) or a symlink there is ignored, and
// said once.
TEST_F(MessageLogProbeTest, ALogPlantedByAnotherUserIsIgnored) {
  LogRegion planted(8);
  planted.add("MPI_Send", 1 * kSecond, 9 * kSecond, 1, 0, 3, 64);
  writeLog(102, planted);  // ours, not job-2's user's
  auto findings = probe_.probe("job-2", 0, 0);
  ASSERT_TRUE(findings.ok());
  EXPECT_EQ(findings->pending, 0u);
  EXPECT_TRUE(findings->entries.empty());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], "message log " + probe_.logOf(102).string() + " ignored: it is owned by uid " +
                              std::to_string(::getuid()) + ", not by the job's user (uid " +
                              std::to_string(::getuid() + 1) + ")");
  ASSERT_TRUE(probe_.probe("job-2", 0, 0).ok());
  EXPECT_EQ(warnings_.size(), 1u);  // once

  // A link at rank 0's path to a real log: not followed.
  LogRegion real(8);
  real.add("MPI_Recv", 5 * kSecond, 7 * kSecond, 0, 0, 3, 64);
  writeLog(101, real);
  std::filesystem::create_symlink(probe_.logOf(101), probe_.logOf(100));
  findings = probe_.probe("job-1", 0, 0);
  ASSERT_TRUE(findings.ok());
  EXPECT_EQ(findings->entries.size(), 1u);  // rank 1's only
  ASSERT_EQ(warnings_.size(), 2u);
  EXPECT_EQ(warnings_[1], "message log " + probe_.logOf(100).string() + " ignored: it is a symlink");
}

TEST_F(MessageLogProbeTest, AJobWithNoRankHereHasNoMessages) {
  auto findings = probe_.probe("other", 0, 0);
  ASSERT_TRUE(findings.ok());
  EXPECT_TRUE(findings->answered);
  EXPECT_TRUE(findings->entries.empty());
  EXPECT_EQ(findings->pending, 0u);
}

TEST_F(MessageLogProbeTest, ABadRequestIsRefusedBeforeTheJobIsLookedUp) {
  auto findings = probe_.probe("", 0, 0);
  ASSERT_FALSE(findings.ok());
  EXPECT_EQ(findings.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(findings.error().message, "job_id is empty");
  findings = probe_.probe("other", 5, 4);
  ASSERT_FALSE(findings.ok());
  EXPECT_EQ(findings.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(findings.error().message, "to_ns is before from_ns");
  EXPECT_TRUE(probe_.probe("job-1", 5, 5).ok());
}

}  // namespace
}  // namespace nk
