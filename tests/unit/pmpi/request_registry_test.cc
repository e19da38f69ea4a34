#include "request_registry.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace nk::pmpi
