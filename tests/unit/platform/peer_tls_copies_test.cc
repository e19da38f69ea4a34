#include "platform/peer_tls_copies.h"

#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

using test::TempDir;

class PeerTlsCopiesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = test::runProgram({NK_MAKE_PEER_CERTS, "--dir", (dir_.path() / "pki").string(), "--ca-name", "site",
                                  "n1=127.0.0.1", "n2=127.0.0.2"});
    ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  }
  PeerTlsFiles node(const std::string& name) {
    const std::filesystem::path pki = dir_.path() / "pki";
    auto files = PeerTlsFiles::load({pki / (name + ".pem"), pki / (name + ".key"), pki / "ca.pem"});
    EXPECT_TRUE(files.ok()) << files.error().message;
    return std::move(*files);
  }
  static struct stat statOf(const std::filesystem::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st;
  }

  TempDir dir_{"peertls-copies"};
};

TEST_F(PeerTlsCopiesTest, HoldTheKeyThenTheChainAndTheCaWhereOnlyTheDaemonReads) {
  auto copies = PeerTlsCopies::open(dir_.path() / "state" / "peer-tls");
  ASSERT_TRUE(copies.ok()) << copies.error().message;
  const PeerTlsFiles n1 = node("n1");
  ASSERT_TRUE(copies->write(n1).ok());
  EXPECT_EQ(test::readFile(copies->identityPath()), n1.privateKeyPem() + n1.certificatePem());
  EXPECT_EQ(test::readFile(copies->caPath()), n1.caPem());
  EXPECT_EQ(statOf(dir_.path() / "state" / "peer-tls").st_mode & 07777, 0700u);
  EXPECT_EQ(statOf(copies->identityPath()).st_mode & 07777, 0600u);
  EXPECT_EQ(statOf(copies->caPath()).st_mode & 07777, 0600u);
}

// gRPC's watcher tells a file that changed while it read it by its
// modification time in seconds: copies written within one second must
// still differ there.
TEST_F(PeerTlsCopiesTest, EachCopyIsDatedAtLeastASecondAfterTheOneItReplaces) {
  auto copies = PeerTlsCopies::open(dir_.path() / "peer-tls");
  ASSERT_TRUE(copies.ok()) << copies.error().message;
  const PeerTlsFiles n1 = node("n1"), n2 = node("n2");
  ASSERT_TRUE(copies->write(n1).ok());
  const time_t identity_first = statOf(copies->identityPath()).st_mtim.tv_sec;
  const time_t ca_first = statOf(copies->caPath()).st_mtim.tv_sec;
  ASSERT_TRUE(copies->write(n2).ok());
  EXPECT_GE(statOf(copies->identityPath()).st_mtim.tv_sec, identity_first + 1);
  EXPECT_GE(statOf(copies->caPath()).st_mtim.tv_sec, ca_first + 1);
  EXPECT_EQ(test::readFile(copies->identityPath()), n2.privateKeyPem() + n2.certificatePem());
  ASSERT_TRUE(copies->write(n1).ok());
  EXPECT_GE(statOf(copies->identityPath()).st_mtim.tv_sec, identity_first + 2);
}

TEST_F(PeerTlsCopiesTest, AnotherUsersDirectoryIsRefused) {
  // A directory others may write to: what is planted there is not trusted.
  const std::filesystem::path open_dir = dir_.path() / "open";
  std::filesystem::create_directories(open_dir);
  ::chmod(open_dir.c_str(), 0777);
  auto copies = PeerTlsCopies::open(open_dir / "peer-tls");
  ASSERT_FALSE(copies.ok());
  EXPECT_NE(copies.error().message.find(open_dir.string()), std::string::npos) << copies.error().message;
}

TEST_F(PeerTlsCopiesTest, TheExpiryIsADateInUtc) {
  EXPECT_TRUE(std::regex_match(node("n1").expiry(), std::regex(R"(20[0-9]{2}-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]:[0-5][0-9] UTC)")))
      << node("n1").expiry();
}

}  // namespace
}  // namespace nk
