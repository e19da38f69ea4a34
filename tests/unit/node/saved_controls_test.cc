#include "node/saved_controls.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>

#include <fstream>

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
