#include "platform/trusted_directory.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testlib/temp_dir.h"

namespace nk {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

std::string contentsOf(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr fs::perms k0755 = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                           fs::perms::others_read | fs::perms::others_exec;
constexpr fs::perms k0644 = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                           fs::perms::others_read;

// Directories below `base`, each 0755 whatever the umask: only what a test
// opens up on purpose is writable by others.
fs::path makeDirs(const fs::path& base, const fs::path& relative) {
  fs::path path = base;
  for (const auto& part : relative) {
    path /= part;
    fs::create_directory(path);
    fs::permissions(path, k0755);
  }
  return path;
}

bool mentions(const Error& error, std::string_view part) { return error.message.find(part) != std::string::npos; }

TEST(TrustedDirectory, OpensAPrivateDirectoryAndReadsAndReplacesItsFiles) {
  test::TempDir dir("trusted");
  auto opened = TrustedDirectory::open(dir.path());
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  auto absent = opened->readFile("state.json");
  ASSERT_TRUE(absent.ok()) << absent.error().message;
  EXPECT_FALSE(absent->has_value());

  ASSERT_TRUE(opened->replaceFile("state.json", "one\n", 0600).ok());
  ASSERT_TRUE(opened->replaceFile("state.json", "two\n", 0600).ok());
  auto read = opened->readFile("state.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, "two\n");
  struct stat st {};
  ASSERT_EQ(::stat((dir / "state.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(fs::exists(dir / "state.json.tmp"));

  ASSERT_TRUE(opened->removeFile("state.json").ok());
  EXPECT_FALSE(fs::exists(dir / "state.json"));
  EXPECT_TRUE(opened->removeFile("state.json").ok());  // absent is fine
  EXPECT_FALSE(opened->readFile("../etc/passwd").ok());
}

TEST(TrustedDirectory, CreatesWhatIsMissing) {
  test::TempDir dir("trusted");
  ::umask(022);
  auto created = TrustedDirectory::openOrCreate(dir / "a" / "b");
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b"));
  EXPECT_FALSE(TrustedDirectory::open(dir / "c").ok());
  auto sub = created->subdirectory("sys", true);
  ASSERT_TRUE(sub.ok()) << sub.error().message;
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b" / "sys"));
}

TEST(TrustedDirectory, ADirectoryOthersCanWriteIsRefused) {
  test::TempDir dir("trusted");
  makeDirs(dir.path(), "open");
  fs::permissions(dir / "open", fs::perms::all);  // 0777
  auto opened = TrustedDirectory::open(dir / "open");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(mentions(opened.error(), "writable by other users (mode 0777)")) << opened.error().message;
  // Below one: refused as well, since its entries can be swapped.
  makeDirs(dir / "open", "inner");
  EXPECT_FALSE(TrustedDirectory::open(dir / "open" / "inner").ok());
  EXPECT_FALSE(TrustedDirectory::openOrCreate(dir / "open" / "new").ok());
  EXPECT_FALSE(fs::exists(dir / "open" / "new"));
  // Sticky and world-writable, like /tmp: fine above, not as the directory itself.
  fs::permissions(dir / "open", fs::perms::all | fs::perms::sticky_bit);
  EXPECT_TRUE(TrustedDirectory::open(dir / "open" / "inner").ok());
  EXPECT_FALSE(TrustedDirectory::open(dir / "open").ok());
}

TEST(TrustedDirectory, ASymlinkAsTheDirectoryIsRefusedButOneAboveIsFollowed) {
  test::TempDir dir("trusted");
  makeDirs(dir.path(), "real/state");
  fs::create_directory_symlink(dir / "real" / "state", dir / "link");
  auto link = TrustedDirectory::open(dir / "link");
  ASSERT_FALSE(link.ok());
  EXPECT_TRUE(mentions(link.error(), "is a symlink")) << link.error().message;
  // As /var/run -> /run: a link of ours above the directory is fine.
  fs::create_directory_symlink(dir / "real", dir / "above");
  auto through = TrustedDirectory::open(dir / "above" / "state");
  ASSERT_TRUE(through.ok()) << through.error().message;
  fs::create_directory_symlink("real", dir / "relative");
  EXPECT_TRUE(TrustedDirectory::open(dir / "relative" / "state").ok());
}

TEST(TrustedDirectory, APlantedSymlinkIsNeitherReadNorWrittenThrough) {
  test::TempDir dir("trusted");
  fs::path victim = dir.writeFile("victim", "root's own\n");
  fs::permissions(victim, fs::perms::owner_read | fs::perms::owner_write);
  makeDirs(dir.path(), "state");
  fs::create_symlink(victim, dir / "state" / "saved.json");
  fs::create_symlink(victim, dir / "state" / "other.json.tmp");
  auto opened = TrustedDirectory::open(dir / "state");
  ASSERT_TRUE(opened.ok()) << opened.error().message;

  auto read = opened->readFile("saved.json");
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(mentions(read.error(), "is a symlink")) << read.error().message;

  // The link at the temporary name goes, the victim stays as it was.
  ASSERT_TRUE(opened->replaceFile("other.json", "new\n", 0600).ok());
  EXPECT_EQ(contentsOf(victim), "root's own\n");
  EXPECT_EQ(contentsOf(dir / "state" / "other.json"), "new\n");
  EXPECT_FALSE(fs::is_symlink(dir / "state" / "other.json"));

  // Replacing the link itself is fine; its target is untouched.
  ASSERT_TRUE(opened->replaceFile("saved.json", "mine\n", 0600).ok());
  EXPECT_EQ(contentsOf(victim), "root's own\n");
  EXPECT_FALSE(fs::is_symlink(dir / "state" / "saved.json"));
}

TEST(TrustedDirectory, AFileOthersCanWriteIsNotRead) {
  test::TempDir dir("trusted");
  fs::path file = dir.writeFile("saved.json", "{}");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_write);
  auto opened = TrustedDirectory::open(dir.path());
  ASSERT_TRUE(opened.ok());
  auto read = opened->readFile("saved.json");
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(mentions(read.error(), "writable by other users")) << read.error().message;
}

TEST(TrustedDirectory, WhatAnotherUserOwnsIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files away";
  test::TempDir dir("trusted");
  fs::path file = dir.writeFile("saved.json", "{}");
  ASSERT_EQ(::chown(file.c_str(), kNobody, kNobody), 0);
  auto opened = TrustedDirectory::open(dir.path());
  ASSERT_TRUE(opened.ok());
  auto read = opened->readFile("saved.json");
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(mentions(read.error(), "owned by uid 65534")) << read.error().message;

  makeDirs(dir.path(), "theirs");
  ASSERT_EQ(::chown((dir / "theirs").c_str(), kNobody, kNobody), 0);
  auto theirs = TrustedDirectory::open(dir / "theirs");
  ASSERT_FALSE(theirs.ok());
  EXPECT_TRUE(mentions(theirs.error(), "owned by uid 65534")) << theirs.error().message;
  EXPECT_FALSE(opened->subdirectory("theirs", false).ok());
  // ... also deep in a tree that is checked whole.
  EXPECT_FALSE(opened->checkTree().ok());
}

TEST(TrustedDirectory, ATreeIsCheckedEntryByEntry) {
  test::TempDir dir("trusted");
  makeDirs(dir.path(), "sys/devices/cpu0");
  fs::permissions(dir.writeFile("sys/devices/cpu0/scaling_max_freq", "2600000\n"), k0644);
  fs::create_directory_symlink("devices/cpu0", dir / "sys" / "cpu0");
  auto sys = TrustedDirectory::open(dir / "sys");
  ASSERT_TRUE(sys.ok());
  EXPECT_TRUE(sys->checkTree().ok());
  fs::permissions(dir / "sys" / "devices" / "cpu0" / "scaling_max_freq", fs::perms::others_write,
                  fs::perm_options::add);
  Status deep = sys->checkTree();
  ASSERT_FALSE(deep.ok());
  EXPECT_TRUE(mentions(deep.error(), "scaling_max_freq is writable by other users")) << deep.error().message;
}

}  // namespace
}  // namespace nk
