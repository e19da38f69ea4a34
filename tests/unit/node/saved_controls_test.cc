#include "node/saved_controls.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace nk {
namespace {

TEST(SavedControls, RoundTrip) {
  std::vector<SavedControls::Entry> entries = {{"cpufreq:0:scaling_max_freq", "2600000"}, {"rapl:1:enabled", "0"}};
  auto parsed = SavedControls::parse(SavedControls::serialize(entries));
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].key, "rapl:1:enabled");
  EXPECT_EQ((*parsed)[1].original, "0");
}

TEST(SavedControls, RejectsGarbage) {
  EXPECT_FALSE(SavedControls::parse("").ok());
  EXPECT_FALSE(SavedControls::parse("{\"controls\": 3}").ok());
  EXPECT_FALSE(SavedControls::parse("{\"controls\": [{\"key\": 1}]}").ok());
}

TEST(SavedControls, CorruptFileIsAnErrorNamingIt) {
  test::TempDir dir("saved");
  auto path = dir / "saved.json";
  std::ofstream(path) << "{ not json";
  auto opened = SavedControls::open(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find(path.string()), std::string::npos);
}

std::string contentsOf(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr char kPlanted[] = R"({"controls": [{"key": "rapl:0:constraint_0_power_limit_uw", "original": "1000"}]})";

// Another user's saved-controls.json in a directory they can write is not
// read: its "originals" would be written to the hardware at the next start.
TEST(SavedControls, ADirectoryOthersCanWriteIsRefused) {
  test::TempDir dir("saved");
  std::filesystem::create_directory(dir / "state");
  std::filesystem::permissions(dir / "state", std::filesystem::perms::all);
  std::ofstream(dir / "state" / "saved.json") << kPlanted;
  auto opened = SavedControls::open(dir / "state" / "saved.json");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(opened.error().message.find("writable by other users"), std::string::npos) << opened.error().message;
}

TEST(SavedControls, AFileOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  test::TempDir dir("saved");
  auto path = dir / "saved.json";
  std::ofstream(path) << kPlanted;
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  auto opened = SavedControls::open(path);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("owned by uid 65534"), std::string::npos) << opened.error().message;
}

// A symlink at the temporary file's name (left by anyone who could write
// the directory once) is replaced, not written through.
TEST(SavedControls, ALinkAtTheTemporaryNameIsNotFollowed) {
  test::TempDir dir("saved");
  auto victim = dir / "victim";
  std::ofstream(victim) << "root's own\n";
  ::chmod(victim.c_str(), 0600);
  auto path = dir / "saved.json";
  std::filesystem::create_symlink(victim, dir / "saved.json.tmp");
  auto opened = SavedControls::open(path);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  ASSERT_TRUE(opened->remember("cpufreq:0:scaling_max_freq", "2600000").ok());
  EXPECT_EQ(contentsOf(victim), "root's own\n");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  auto reopened = SavedControls::open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  ASSERT_EQ(reopened->entries().size(), 1u);
  EXPECT_EQ(reopened->entries()[0].original, "2600000");
  // A link at the file itself is refused on reading.
  std::filesystem::remove(path);
  std::filesystem::create_symlink(victim, path);
  EXPECT_FALSE(SavedControls::open(path).ok());
  EXPECT_EQ(contentsOf(victim), "root's own\n");
}

TEST(SavedControls, KeysSplit) {
  auto key = SavedControls::splitKey("cpufreq:12:scaling_min_freq");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->domain, "cpufreq");
  EXPECT_EQ(key->id, 12u);
  EXPECT_EQ(key->file, "scaling_min_freq");
  EXPECT_FALSE(SavedControls::splitKey("cpufreq:x:y").has_value());
  EXPECT_FALSE(SavedControls::splitKey("nonsense").has_value());
  EXPECT_EQ(SavedControls::makeKey("rapl", 1, "enabled"), "rapl:1:enabled");
}

}  // namespace
}  // namespace nk
