#include "backoff.h"

#include <gtest/gtest.h>

namespace nk::client {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DoublesUpToTheMaximumAndResets) {
  Backoff backoff(milliseconds(100), milliseconds(500));
  EXPECT_EQ(backoff.next(), milliseconds(100));
  EXPECT_EQ(backoff.next(), milliseconds(200));
  EXPECT_EQ(backoff.next(), milliseconds(400));
  EXPECT_EQ(backoff.next(), milliseconds(500));
  EXPECT_EQ(backoff.next(), milliseconds(500));
  backoff.reset();
  EXPECT_EQ(backoff.next(), milliseconds(100));
}

}  // namespace
}  // namespace nk::client
