#include "platform/sysfs_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include <gtest/gtest.h>

#include "fake_sysfs.h"

namespace nk {
namespace {

using test::FakeSysfs;

TEST(SysfsFile, ReadsTrimmedText) {
  FakeSysfs fs;
  fs.write("a", "  performance\n");
  auto text = SysfsFile::readText(fs.path("a"));
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(*text, "performance");
}

TEST(SysfsFile, MissingFileNamesThePath) {
  FakeSysfs fs;
  auto text = SysfsFile::readText(fs.path("nope"));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(text.error().message, fs.path("nope").string() + ": No such file or directory");
  EXPECT_FALSE(SysfsFile::exists(fs.path("nope")));
}

TEST(SysfsFile, ReadsUint64) {
  FakeSysfs fs;
  fs.write("n", "18446744073709551615\n");
  auto n = SysfsFile::readUint64(fs.path("n"));
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 18446744073709551615ull);
}

TEST(SysfsFile, RejectsGarbage) {
  FakeSysfs fs;
  fs.write("n", "xyz\n");
  auto n = SysfsFile::readUint64(fs.path("n"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(n.error().message, fs.path("n").string() + ": expected a number, found 'xyz'");
}

TEST(SysfsFile, RejectsTrailingGarbageEmptyNegativeAndOverflow) {
  FakeSysfs fs;
  const struct {
    const char* content;
    const char* expected;
  } cases[] = {
      {"12abc", "expected a number, found '12abc'"},
      {"", "expected a number, found nothing"},
      {"\n \n", "expected a number, found nothing"},
      {"-5", "expected a non-negative number, found '-5'"},
      {"18446744073709551616", "number '18446744073709551616' is out of range"},
      {"1 2", "expected a number, found '1 2'"},
      {"\x01\xff", "expected a number, found '\\x01\\xff'"},
  };
  for (const auto& c : cases) {
    fs.write("n", c.content);
    auto n = SysfsFile::readUint64(fs.path("n"));
    ASSERT_FALSE(n.ok()) << "accepted '" << c.content << "'";
    EXPECT_EQ(n.error().message, fs.path("n").string() + ": " + c.expected);
  }
}

TEST(SysfsFile, ReadsSignedNumbers) {
  FakeSysfs fs;
  fs.write("t", "-2500\n");
  auto t = SysfsFile::readInt64(fs.path("t"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(*t, -2500);
}

TEST(SysfsFile, ReadsWordsAndNumberLists) {
  FakeSysfs fs;
  fs.write("w", "conservative ondemand userspace powersave performance schedutil \n");
  auto words = SysfsFile::readWords(fs.path("w"));
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (std::vector<std::string>{"conservative", "ondemand", "userspace", "powersave",
                                               "performance", "schedutil"}));
  fs.write("l", "3000000 2400000 1200000 \n");
  auto list = SysfsFile::readUint64List(fs.path("l"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<uint64_t>{3000000, 2400000, 1200000}));
  fs.write("l", "3000000 oops 1200000\n");
  auto bad = SysfsFile::readUint64List(fs.path("l"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("found 'oops'"), std::string::npos) << bad.error().message;
}

TEST(SysfsFile, RefusesHugeFiles) {
  FakeSysfs fs;
  fs.write("big", std::string(SysfsFile::kDefaultMaxBytes + 1, '1'));
  auto text = SysfsFile::readText(fs.path("big"));
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("larger than"), std::string::npos);
}

TEST(SysfsFile, DirectoryIsAnErrorNotACrash) {
  FakeSysfs fs;
  fs.mkdir("d");
  auto n = SysfsFile::readUint64(fs.path("d"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message, fs.path("d").string() + ": Is a directory");
}

TEST(SysfsFile, WriteReplacesContent) {
  FakeSysfs fs;
  fs.write("f", "3000000\n");
  ASSERT_TRUE(SysfsFile::write(fs.path("f"), uint64_t{800000}).ok());
  EXPECT_EQ(fs.read("f"), "800000");
  ASSERT_TRUE(SysfsFile::write(fs.path("f"), std::string_view("userspace")).ok());
  EXPECT_EQ(fs.read("f"), "userspace");
}

TEST(SysfsFile, WriteDoesNotCreateMissingFiles) {
  FakeSysfs fs;
  Status status = SysfsFile::write(fs.path("absent"), uint64_t{1});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(status.error().message, fs.path("absent").string() + ": No such file or directory");
  EXPECT_FALSE(SysfsFile::exists(fs.path("absent")));
}

TEST(SysfsFile, PermissionErrorsHaveTheirOwnCode) {
  FakeSysfs fs;
  fs.write("secret", "1");
  ::chmod(fs.path("secret").c_str(), 0);
  const std::string expected = fs.path("secret").string() + ": Permission denied";
  EXPECT_EXIT(test::runUnprivileged([&] {
                auto n = SysfsFile::readUint64(fs.path("secret"));
                if (n.ok()) return false;
                std::cerr << n.error().message;
                return n.error().code == ErrorCode::kPermissionDenied && n.error().message == expected;
              }),
              testing::ExitedWithCode(0), "");
}

TEST(SysfsFile, ListsIndexedEntriesNumerically) {
  FakeSysfs fs;
  for (const char* name : {"policy10", "policy2", "policy0", "policyx", "policy1.bak", "policy"}) fs.mkdir(name);
  auto entries = SysfsFile::listIndexed(fs.root(), "policy");
  ASSERT_TRUE(entries.ok());
  std::vector<uint32_t> indices;
  for (const auto& e : *entries) indices.push_back(e.index);
  EXPECT_EQ(indices, (std::vector<uint32_t>{0, 2, 10}));
  EXPECT_EQ(SysfsFile::indexAfterPrefix("intel-rapl:0:0", "intel-rapl:"), std::nullopt);
  EXPECT_EQ(SysfsFile::indexAfterPrefix("intel-rapl:3", "intel-rapl:"), 3u);
  EXPECT_EQ(SysfsFile::indexAfterPrefix("cpu99999999999", "cpu"), std::nullopt);
}

}  // namespace
}  // namespace nk
