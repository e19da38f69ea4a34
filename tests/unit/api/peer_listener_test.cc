#include "api/peer_listener.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

TEST(PeerListenerTest, WildcardAddressesAreToldFromOneInterface) {
  for (const char* every : {"0.0.0.0:7400", "[::]:7400", "[0:0:0:0:0:0:0:0]:7400", "[::0]:7400", ":7400"})
    EXPECT_TRUE(PeerListener::listensOnEveryInterface(every)) << every;
  for (const char* one : {"10.1.0.7:7400", "127.0.0.1:7400", "[::1]:7400", "[fd00::7]:7400", "node007:7400",
                          "0.0.0.1:7400", "localhost:7400"})
    EXPECT_FALSE(PeerListener::listensOnEveryInterface(one)) << one;
}

}  // namespace
}  // namespace nk
