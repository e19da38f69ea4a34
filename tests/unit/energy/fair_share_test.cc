#include "energy/fair_share.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace nk {
namespace {

TEST(FairShare, SmallDemandKeepsItsShareRestSplit) {
  std::vector<double> demand{10.0, 30.0, 30.0}, out(3);
  FairShare::divide(50.0, demand, out);
  // 10 fits under 50/3, the other two split 40.
  EXPECT_DOUBLE_EQ(out[0], 10.0);
  EXPECT_DOUBLE_EQ(out[1], 20.0);
  EXPECT_DOUBLE_EQ(out[2], 20.0);
}

TEST(FairShare, EveryoneSatisfiedBelowCapacity) {
  std::vector<double> demand{10.0, 15.0}, out(2);
  FairShare::divide(100.0, demand, out);
  EXPECT_DOUBLE_EQ(out[0], 10.0);
  EXPECT_DOUBLE_EQ(out[1], 15.0);
}

TEST(FairShare, BadDemandsAskForNothingOrTheWhole) {
  std::vector<double> demand{NAN, -3.0, INFINITY, 1e9}, out(4);
  FairShare::divide(40.0, demand, out);
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_DOUBLE_EQ(out[2], 20.0);
  EXPECT_DOUBLE_EQ(out[3], 20.0);
}

TEST(FairShare, IntegerCores) {
  std::vector<uint32_t> demand{2, 12, 12}, out(3);
  FairShare::divide(12u, demand, out);
  EXPECT_EQ(out[0], 2u);
  EXPECT_EQ(out[1], 5u);
  EXPECT_EQ(out[2], 5u);
}

}  // namespace
}  // namespace nk
