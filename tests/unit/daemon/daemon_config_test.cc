#include "daemon_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "daemon_options.h"

namespace nk {
namespace {

TEST(DaemonConfig, ParsesKnownKeys) {
  auto config = DaemonConfig::parse(R"(
socket = "/tmp/x.sock"
state_dir = "/tmp/state"
emulate = true
profile = "intel-pstate-laptop"
log_level = "debug"
telemetry_interval_ms = 250
admin_group = "hpcadmin"
)", "test.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(*config->socket, "/tmp/x.sock");
  EXPECT_EQ(*config->emulate, true);
  EXPECT_EQ(*config->telemetry_interval_ms, 250u);
  EXPECT_EQ(*config->admin_group, "hpcadmin");
  EXPECT_FALSE(config->sysfs_root.has_value());
}

TEST(DaemonConfig, ErrorsNameTheLine) {
  auto unknown = DaemonConfig::parse("socket = \"/a\"\nsokcet = \"/b\"\n", "x.toml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("x.toml:2"), std::string::npos) << unknown.error().message;
  EXPECT_NE(unknown.error().message.find("sokcet"), std::string::npos);

  auto syntax = DaemonConfig::parse("socket = \n", "y.toml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.error().message.find("y.toml:1"), std::string::npos) << syntax.error().message;

  auto type = DaemonConfig::parse("emulate = \"yes\"\n", "z.toml");
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.error().message.find("emulate"), std::string::npos);

  EXPECT_FALSE(DaemonConfig::parse("telemetry_interval_ms = 1\n", "t").ok());
  EXPECT_FALSE(DaemonConfig::parse("log_level = \"loud\"\n", "t").ok());
}

TEST(DaemonOptions, FlagsOverrideDefaults) {
  const char* argv[] = {"nodekeeperd", "--emulate", "--state-dir", "/tmp/s", "--socket=/tmp/a.sock",
                        "--config", "/nonexistent/for/sure.toml"};
  auto missing = DaemonOptions::fromCommandLine(argv);
  ASSERT_FALSE(missing.ok());  // an explicit --config must exist
  EXPECT_NE(missing.error().message.find("/nonexistent/for/sure.toml"), std::string::npos);

  const char* argv2[] = {"nodekeeperd", "--emulate", "intel-pstate-laptop", "--state-dir", "/tmp/s",
                         "--socket=/tmp/a.sock", "--log-level", "debug"};
  auto options = DaemonOptions::fromCommandLine(argv2);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_TRUE(options->emulate);
  EXPECT_EQ(options->profile, "intel-pstate-laptop");
  EXPECT_EQ(options->state_dir, "/tmp/s");
  EXPECT_EQ(options->socket_path, "/tmp/a.sock");
  EXPECT_EQ(options->log_level, LogLevel::kDebug);
}

TEST(DaemonOptions, EmulateWithoutProfileBeforeAnotherFlag) {
  const char* argv[] = {"nodekeeperd", "--emulate", "--state-dir", "/tmp/s"};
  auto options = DaemonOptions::fromCommandLine(argv);
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->emulate);
  EXPECT_TRUE(options->profile.empty());
}

TEST(DaemonOptions, RejectsBadFlags) {
  const char* unknown[] = {"nodekeeperd", "--frobnicate"};
  auto a = DaemonOptions::fromCommandLine(unknown);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("--frobnicate"), std::string::npos);
  const char* no_value[] = {"nodekeeperd", "--socket"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(no_value).ok());
  const char* bad_level[] = {"nodekeeperd", "--log-level", "chatty"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(bad_level).ok());
  const char* both[] = {"nodekeeperd", "--emulate", "--sysfs-root", "/tmp"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(both).ok());
  const char* interval[] = {"nodekeeperd", "--telemetry-interval-ms", "5"};
  EXPECT_FALSE(DaemonOptions::fromCommandLine(interval).ok());
}

// The shipped example config documents every key with its default, commented
// out. Uncommented, it must parse and agree with the built-in defaults.
TEST(DaemonConfig, ShippedExampleMatchesDefaults) {
  std::ifstream in(NK_SOURCE_ROOT "/systemd/nodekeeperd.toml");
  ASSERT_TRUE(in) << "cannot open the example config";
  std::stringstream uncommented;
  std::regex setting(R"(^#([a-z_]+ = .*)$)");
  std::string line;
  int settings = 0;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_match(line, match, setting)) {
      uncommented << match[1] << "\n";
      ++settings;
    }
  }
  EXPECT_EQ(settings, 10);
  auto config = DaemonConfig::parse(uncommented.str(), "nodekeeperd.toml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  DaemonOptions defaults;
  EXPECT_EQ(*config->socket, defaults.socket_path.string());
  EXPECT_EQ(*config->state_dir, defaults.state_dir.string());
  EXPECT_EQ(*config->emulate, defaults.emulate);
  EXPECT_EQ(*config->sysfs_root, defaults.sysfs_root.string());
  EXPECT_EQ(*config->telemetry_interval_ms, defaults.telemetry_interval_ms);
  EXPECT_EQ(*config->admin_group, defaults.admin_group);
  EXPECT_EQ(*config->log_level, "info");
  EXPECT_DOUBLE_EQ(*config->dct_interval_ms / 1000.0, defaults.energy.dct_interval_s);
  EXPECT_EQ(*config->dvfs_per_dct, defaults.energy.dvfs_per_dct);
}

TEST(DaemonConfig, EnergyIntervalsFromFileAndFlags) {
  auto config = DaemonConfig::parse("dct_interval_ms = 250\ndvfs_per_dct = 5\n", "t");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(*config->dct_interval_ms, 250u);
  EXPECT_EQ(*config->dvfs_per_dct, 5u);
  auto too_short = DaemonConfig::parse("dct_interval_ms = 5\n", "t");
  ASSERT_FALSE(too_short.ok());
  EXPECT_NE(too_short.error().message.find("between 20 and 60000"), std::string::npos);
  EXPECT_FALSE(DaemonConfig::parse("dvfs_per_dct = 0\n", "t").ok());
  EXPECT_FALSE(DaemonConfig::parse("dvfs_per_dct = 2.5\n", "t").ok());

  const char* flags[] = {"nodekeeperd", "--config", "/dev/null", "--dct-interval-ms", "300", "--dvfs-per-dct=6"};
  auto options = DaemonOptions::fromCommandLine(flags);
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_DOUBLE_EQ(options->energy.dct_interval_s, 0.3);
  EXPECT_EQ(options->energy.dvfs_per_dct, 6u);
  EXPECT_DOUBLE_EQ(options->energy.dvfsIntervalS(), 0.05);
  const char* bad[] = {"nodekeeperd", "--config", "/dev/null", "--dvfs-per-dct", "many"};
  auto refused = DaemonOptions::fromCommandLine(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--dvfs-per-dct must be a number between 1 and 100"), std::string::npos);
}

}  // namespace
}  // namespace nk
