#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "testlib/files.h"

namespace nk::test {
namespace {

namespace fs = std::filesystem;

fs::perms permissionsOf(const fs::path& path) { return fs::status(path).permissions() & fs::perms::all; }

TEST(TempDir, IsAFreshPrivateDirectoryNamedAfterItsTag) {
  TempDir dir("probe");
  ASSERT_TRUE(fs::is_directory(dir.path()));
  EXPECT_EQ(dir.path().filename().string().rfind("nk-probe-", 0), 0u) << dir.path();
  EXPECT_TRUE(fs::is_empty(dir.path()));
  EXPECT_EQ(permissionsOf(dir.path()), fs::perms::owner_all);
}

TEST(TempDir, SharedOneIsUnderTmpAndTraversableByEveryone) {
  TempDir dir("shared", TempDir::Access::kShared);
  EXPECT_EQ(dir.path().parent_path(), fs::path("/tmp"));
  EXPECT_EQ(permissionsOf(dir.path()), fs::perms(0755));
}

TEST(TempDir, TwoAreDistinct) {
  TempDir a("same"), b("same");
  EXPECT_NE(a.path(), b.path());
}

TEST(TempDir, IsRemovedWithEverythingInIt) {
  fs::path kept;
  {
    TempDir dir;
    kept = dir.path();
    dir.writeFile("a/b/c.txt", "deep");
    fs::create_directory(dir / "empty");
    ASSERT_TRUE(fs::exists(kept / "a/b/c.txt"));
  }
  EXPECT_FALSE(fs::exists(kept));
}

TEST(TempDir, WriteFileMakesParentsAndReplacesContents) {
  TempDir dir;
  fs::path file = dir.writeFile("x/y.txt", "first, longer text");
  EXPECT_EQ(file, dir.path() / "x/y.txt");
  EXPECT_EQ(readFile(file), "first, longer text");
  dir.writeFile("x/y.txt", "second");
  EXPECT_EQ(readFile(file), "second");
}

TEST(TempDir, SlashJoinsUnderThePath) {
  TempDir dir;
  EXPECT_EQ(dir / "a" / "b", dir.path() / "a" / "b");
  EXPECT_NE(dir / "a", fs::path("a"));
}

}  // namespace
}  // namespace nk::test
