// The limits a daemon names as a Publish stream opens are read only as the
// daemon writes them: plain decimal digits within the setting's range.
#include <gtest/gtest.h>

#include "wire/publish_limits.h"

namespace nk::wire {
namespace {

TEST(PublishLimits, MessageBytesWithinTheDaemonsRangeAreRead) {
  EXPECT_EQ(PublishLimits::parseMessageBytes("4096"), 4096u);
  EXPECT_EQ(PublishLimits::parseMessageBytes("4194304"), 4194304u);
  EXPECT_EQ(PublishLimits::parseMessageBytes("1073741824"), 1073741824u);
  for (const char* bad : {"", "4095", "1073741825", "99999999999", "-4096", "+4096", " 4096", "4096 ", "4096x", "4 KiB",
                          "0x1000"})
    EXPECT_EQ(PublishLimits::parseMessageBytes(bad), std::nullopt) << "'" << bad << "'";
}

TEST(PublishLimits, MessagesPerSecondWithinTheDaemonsRangeAreRead) {
  EXPECT_EQ(PublishLimits::parseMessagesPerSecond("1"), 1u);
  EXPECT_EQ(PublishLimits::parseMessagesPerSecond("10000"), 10000u);
  EXPECT_EQ(PublishLimits::parseMessagesPerSecond("10000000"), 10000000u);
  for (const char* bad : {"", "0", "10000001", "-1", "1.5", "ten"})
    EXPECT_EQ(PublishLimits::parseMessagesPerSecond(bad), std::nullopt) << "'" << bad << "'";
}

}  // namespace
}  // namespace nk::wire
