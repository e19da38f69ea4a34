#include "testlib/daemon_fixture.h"

namespace nk::test {

void DaemonFixture::SetUp() {
  ASSERT_TRUE(daemon_.start(dir_.path(), daemon_args_)) << daemon_.lastError();
  channel_ = grpc::CreateChannel("unix:" + daemon_.socket().string(), grpc::InsecureChannelCredentials());
}

void DaemonFixture::TearDown() { daemon_.stop(); }

}  // namespace nk::test
