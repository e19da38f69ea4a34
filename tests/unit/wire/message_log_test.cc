#include "wire/message_log.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace nk::wire {
namespace {

TEST(MessageLog, KeepsTheNewestEntriesInOrder) {
  std::vector<std::byte> region(MessageLog::regionSize(4));
  MessageLog log(region, 4);
  EXPECT_TRUE(MessageLog::read(region).empty());
  for (int i = 0; i < 6; ++i) log.append("MPI_Send", i, 100 + i, 8u * i, 1000 * i, 1000 * i + 5, i == 5 ? 13 : 0);
  auto entries = MessageLog::read(region);
  ASSERT_EQ(entries.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(entries[i].operation, "MPI_Send");
    EXPECT_EQ(entries[i].peer, i + 2);
    EXPECT_EQ(entries[i].tag, 102 + i);
    EXPECT_EQ(entries[i].bytes, 8u * (i + 2));
    EXPECT_EQ(entries[i].start_ns, 1000 * (i + 2));
    EXPECT_EQ(entries[i].end_ns, 1000 * (i + 2) + 5);
  }
  EXPECT_EQ(entries[3].outcome, 13);
}

// A reader that copies the file: an entry whose slot was written again
// between its copy and the later one is left out, the rest kept.
TEST(MessageLog, FromTwoCopiesAnEntryRewrittenBetweenThemIsLeftOut) {
  std::vector<std::byte> region(MessageLog::regionSize(2));
  MessageLog log(region, 2);
  log.append("MPI_Send", 1, 1, 8, 1000, 1005, 0);
  log.append("MPI_Recv", 2, 2, 8, 2000, 2005, 0);
  const std::vector<std::byte> first = region;
  EXPECT_EQ(MessageLog::read(first, first).size(), 2u);
  log.append("MPI_Bcast", 3, 3, 8, 3000, 3005, 0);  // takes the first slot again
  const std::vector<std::byte> later = region;
  auto entries = MessageLog::read(first, later);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].operation, "MPI_Recv");
  EXPECT_EQ(MessageLog::read(first).size(), 2u) << "one copy alone cannot tell";
  std::string error;
  EXPECT_TRUE(MessageLog::read(first, std::span(later).first(later.size() / 2), &error).size() <= 1u)
      << "a later copy cut short keeps nothing it does not hold";
}

TEST(MessageLog, LongNamesAreCutAndJunkIsRefused) {
  std::vector<std::byte> region(MessageLog::regionSize(2));
  MessageLog log(region, 2);
  log.append("MPI_Reduce_scatter_block_with_a_long_tail", -1, 0, 0, 1, 2, 0);
  auto entries = MessageLog::read(region);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].operation, "MPI_Reduce_scatter_bloc");  // 23 characters
  std::vector<std::byte> junk(200, std::byte{0x5a});
  std::string error;
  EXPECT_TRUE(MessageLog::read(junk, &error).empty());
  EXPECT_EQ(error, "not a message log (bad magic)");
  EXPECT_TRUE(MessageLog::read(std::span(region).first(10), &error).empty());
  EXPECT_EQ(error, "too short for a message log header");
}

// Threads of an MPI_THREAD_MULTIPLE rank log at once: nothing torn.
TEST(MessageLog, ConcurrentWritersLeaveWholeEntries) {
  std::vector<std::byte> region(MessageLog::regionSize(64));
  MessageLog log(region, 64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) log.append("MPI_Recv", t, t, static_cast<uint64_t>(t), t, t, t);
    });
  for (auto& th : threads) th.join();
  auto entries = MessageLog::read(region);
  EXPECT_EQ(entries.size(), 64u);
  for (const auto& e : entries) {
    EXPECT_EQ(e.tag, e.peer);
    EXPECT_EQ(e.bytes, static_cast<uint64_t>(e.peer));
    EXPECT_EQ(e.outcome, e.peer);
  }
}

}  // namespace
}  // namespace nk::wire
