#include "base/signal_name.h"

#include <gtest/gtest.h>

#include <csignal>

namespace nk {
namespace {

TEST(SignalName, NamesSignalsAsPeopleWriteThem) {
  EXPECT_EQ(signalName(SIGINT), "SIGINT");
  EXPECT_EQ(signalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(signalName(SIGSEGV), "SIGSEGV");
}

TEST(SignalName, ANumberWithoutANameStaysANumber) {
  EXPECT_EQ(signalName(200), "signal 200");
  EXPECT_EQ(signalName(-1), "signal -1");
}

}  // namespace
}  // namespace nk
