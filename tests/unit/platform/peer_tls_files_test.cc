#include "platform/peer_tls_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

using test::TempDir;

// Two sites' PKIs made by tools/make-peer-certs: "a" (nodes n1, n2) and
// "b" (node n1), once for the whole suite (keys take a moment to make).
class PeerTlsFilesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("peertls");
    for (const char* site : {"a", "b"}) {
      auto made = test::runProgram({NK_MAKE_PEER_CERTS, "--dir", (dir_->path() / site).string(), "--ca-name",
                                    std::string("site ") + site, "n1=127.0.0.1", "n2=127.0.0.2"});
      ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::filesystem::path file(const std::string& site, const std::string& name) {
    return dir_->path() / site / name;
  }
  static PeerTlsFiles::Paths node(const std::string& site, const std::string& name) {
    return {file(site, name + ".pem"), file(site, name + ".key"), file(site, "ca.pem")};
  }
  // A copy of a file in a scratch directory of this test, with `mode`.
  std::filesystem::path copy(const std::filesystem::path& from, const std::string& name, mode_t mode) {
    std::filesystem::path to = scratch_ / name;
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
    ::chmod(to.c_str(), mode);
    return to;
  }
  std::filesystem::path write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    std::filesystem::path to = scratch_ / name;
    std::ofstream(to) << text;
    ::chmod(to.c_str(), mode);
    return to;
  }
  static std::string refusal(const PeerTlsFiles::Paths& paths) {
    auto files = PeerTlsFiles::load(paths);
    return files.ok() ? "(accepted)" : files.error().message;
  }
  static bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  static TempDir* dir_;
  TempDir scratch_{"peertls-case"};
};

TempDir* PeerTlsFilesTest::dir_ = nullptr;

TEST_F(PeerTlsFilesTest, LoadsAScriptMadeNodeAndNamesItAndItsCa) {
  auto files = PeerTlsFiles::load(node("a", "n1"));
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_EQ(files->subject(), "CN=n1");
  EXPECT_EQ(files->commonName(), "n1");
  EXPECT_EQ(files->caSubject(), "CN=site a");
  EXPECT_TRUE(contains(files->certificatePem(), "-----BEGIN CERTIFICATE-----"));
  EXPECT_TRUE(contains(files->privateKeyPem(), "PRIVATE KEY-----"));
  EXPECT_EQ(files->caPem(), test::readFile(file("a", "ca.pem")));
  // The script's keys are the owner's alone; a key its group may read is fine.
  struct stat st {};
  ASSERT_EQ(::stat(file("a", "n1.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto paths = node("a", "n1");
  paths.private_key = copy(paths.private_key, "group.key", 0640);
  EXPECT_EQ(refusal(paths), "(accepted)");
}

TEST_F(PeerTlsFilesTest, MissingFilesAndNonFilesAreNamed) {
  auto paths = node("a", "n1");
  paths.certificate = scratch_ / "nope.pem";
  EXPECT_EQ(refusal(paths), "peer certificate " + paths.certificate.string() + ": No such file or directory");
  paths = node("a", "n1");
  paths.private_key = scratch_.path();
  EXPECT_EQ(refusal(paths), "peer key " + scratch_.path().string() + " is not a regular file");
  // A FIFO is refused at once, not waited on.
  paths = node("a", "n1");
  paths.ca = scratch_ / "fifo";
  ASSERT_EQ(::mkfifo(paths.ca.c_str(), 0644), 0);
  EXPECT_EQ(refusal(paths), "peer CA " + paths.ca.string() + " is not a regular file");
  paths = node("a", "n1");
  paths.ca = write("empty.pem", "");
  EXPECT_EQ(refusal(paths), "peer CA " + paths.ca.string() + " is empty");
}

TEST_F(PeerTlsFilesTest, AKeyOthersMayReadIsRefused) {
  auto paths = node("a", "n1");
  paths.private_key = copy(paths.private_key, "open.key", 0644);
  EXPECT_EQ(refusal(paths), "peer key " + paths.private_key.string() +
                                " has mode 0644: other users may read the key; chmod 600 " +
                                paths.private_key.string());
}

TEST_F(PeerTlsFilesTest, FilesOthersMayChangeAreRefused) {
  auto paths = node("a", "n1");
  paths.ca = copy(paths.ca, "ca.pem", 0664);
  EXPECT_EQ(refusal(paths), "peer CA " + paths.ca.string() + " has mode 0664: others than its owner may change it; "
                                                             "chmod go-w " + paths.ca.string());
  paths = node("a", "n1");
  paths.certificate = copy(paths.certificate, "n1.pem", 0646);
  EXPECT_TRUE(contains(refusal(paths), "has mode 0646: others than its owner may change it")) << refusal(paths);
}

TEST_F(PeerTlsFilesTest, FilesOfAnotherUserAreRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  auto paths = node("a", "n1");
  paths.ca = copy(paths.ca, "theirs.pem", 0644);
  ASSERT_EQ(::chown(paths.ca.c_str(), 65534, 65534), 0);
  EXPECT_EQ(refusal(paths), "peer CA " + paths.ca.string() +
                                " belongs to uid 65534: it must belong to root or to the daemon's user (uid 0), or "
                                "another user could change whom this node trusts");
}

TEST_F(PeerTlsFilesTest, TextThatIsNotPemIsRefused) {
  auto paths = node("a", "n1");
  paths.certificate = write("junk.pem", "hello\n");
  EXPECT_EQ(refusal(paths),
            "peer certificate " + paths.certificate.string() + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  paths = node("a", "n1");
  paths.private_key = write("junk.key", "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n", 0600);
  EXPECT_EQ(refusal(paths),
            "peer key " + paths.private_key.string() + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
  // A certificate where the CA should be is no CA of anything.
  paths = node("a", "n1");
  paths.ca = write("junk-ca.pem", test::readFile(file("a", "n1.key")));
  EXPECT_TRUE(contains(refusal(paths), "holds no PEM certificate")) << refusal(paths);
}

TEST_F(PeerTlsFilesTest, AnEncryptedKeyIsRefused) {
  std::filesystem::path encrypted = scratch_ / "encrypted.key";
  auto made = test::runProgram({"openssl", "pkey", "-in", file("a", "n1.key").string(), "-aes256", "-passout",
                                "pass:secret", "-out", encrypted.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ::chmod(encrypted.c_str(), 0600);
  auto paths = node("a", "n1");
  paths.private_key = encrypted;
  EXPECT_TRUE(contains(refusal(paths), "peer key " + encrypted.string() + " is encrypted: the daemon cannot ask for a "
                                                                            "passphrase"))
      << refusal(paths);
}

TEST_F(PeerTlsFilesTest, AKeyOfAnotherCertificateIsRefused) {
  auto paths = node("a", "n1");
  paths.private_key = file("a", "n2.key");
  EXPECT_EQ(refusal(paths), "peer key " + paths.private_key.string() + " does not match peer certificate " +
                                paths.certificate.string() + " (the key of another certificate?)");
}

TEST_F(PeerTlsFilesTest, ACertificateOfAnotherCaIsRefused) {
  auto paths = node("b", "n1");
  paths.ca = file("a", "ca.pem");
  EXPECT_EQ(refusal(paths), "peer certificate " + paths.certificate.string() + " does not verify against peer CA " +
                                paths.ca.string() +
                                ": unable to get local issuer certificate (peers that trust this CA would refuse "
                                "this node)");
  // Both CAs in one file: either verifies.
  paths.ca = write("both.pem", test::readFile(file("a", "ca.pem")) + test::readFile(file("b", "ca.pem")));
  EXPECT_EQ(refusal(paths), "(accepted)");
}

TEST_F(PeerTlsFilesTest, ACertificateForServersOnlyIsRefused) {
  // Signed by site a's CA, but good for TLS servers only.
  const std::string script = R"(set -e
cd ")" + scratch_.path().string() + R"("
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server.key 2>/dev/null
openssl req -new -key server.key -subj /CN=server -out server.csr
printf 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' > ext.cnf
openssl x509 -req -in server.csr -CA ")" + file("a", "ca.pem").string() + R"(" -CAkey ")" +
                             file("a", "ca.key").string() +
                             R"(" -set_serial 7 -days 2 -extfile ext.cnf -out server.pem 2>/dev/null
chmod 600 server.key
)";
  auto made = test::runProgram({"bash", "-c", script});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  PeerTlsFiles::Paths paths{scratch_ / "server.pem", scratch_ / "server.key", file("a", "ca.pem")};
  EXPECT_EQ(refusal(paths), "peer certificate " + paths.certificate.string() +
                                " does not allow both TLS server and client use (extendedKeyUsage needs serverAuth "
                                "and clientAuth): a daemon is both to its peers");
}

}  // namespace
}  // namespace nk
