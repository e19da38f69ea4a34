#include "request_registry.h"

#include <gtest/gtest.h>

#include <vector>

namespace nk::pmpi {
namespace {

TEST(RequestRegistry, CompletedRequestsGoUnlessPersistent) {
  RequestRegistry r;
  r.add(1, {"MPI_Isend", 3, 10, false});
  r.add(2, {"MPI_Recv_init", RequestRegistry::kAnyPeer, 10, true});
  ASSERT_TRUE(r.find(1));
  EXPECT_EQ(r.find(1)->peer, 3);
  EXPECT_STREQ(r.find(2)->operation, "MPI_Recv_init");
  r.completed(1);
  r.completed(2);
  EXPECT_FALSE(r.find(1));
  ASSERT_TRUE(r.find(2));  // persistent: lives until freed
  r.freed(2);
  EXPECT_FALSE(r.find(2));
  EXPECT_EQ(r.size(), 0u);
  r.completed(42);  // unknown: nothing happens
  EXPECT_EQ(r.size(), 0u);
}


TEST(RequestRegistry, AWaitOnCollectivesReportsTheLatestOnTheFirstCommunicator) {
  RequestRegistry r;
  RequestRegistry::Entry iallreduce{"MPI_Iallreduce", RequestRegistry::kNoPeer, 10, false, true, 4};
  RequestRegistry::Entry ibcast{"MPI_Ibcast", RequestRegistry::kNoPeer, 10, false, true, 5};
  RequestRegistry::Entry elsewhere{"MPI_Ibarrier", RequestRegistry::kNoPeer, 11, false, true, 9};
  r.add(1, {"MPI_Isend", 3, 10, false});
  r.add(2, iallreduce);
  r.add(3, ibcast);
  r.add(4, elsewhere);
  EXPECT_FALSE(r.latestCollective(std::vector<uint64_t>{1}));    // point to point only
  EXPECT_FALSE(r.latestCollective(std::vector<uint64_t>{77}));   // unknown
  auto one = r.latestCollective(std::vector<uint64_t>{1, 2});
  ASSERT_TRUE(one);
  EXPECT_STREQ(one->operation, "MPI_Iallreduce");
  EXPECT_EQ(one->collective_seq, 4u);
  // The wait needs the later one as well: it names who has not entered it.
  auto latest = r.latestCollective(std::vector<uint64_t>{4, 3, 2});
  ASSERT_TRUE(latest);
  EXPECT_STREQ(latest->operation, "MPI_Ibarrier");  // the first communicator seen
  latest = r.latestCollective(std::vector<uint64_t>{2, 4, 3});
  ASSERT_TRUE(latest);
  EXPECT_STREQ(latest->operation, "MPI_Ibcast");
  EXPECT_EQ(latest->communicator, 10u);
  r.completed(3);  // a completed collective is forgotten like any request
  EXPECT_EQ(r.latestCollective(std::vector<uint64_t>{2, 3})->collective_seq, 4u);
}

}  // namespace
}  // namespace nk::pmpi
