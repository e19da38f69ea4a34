#include "cli/argument_parser.h"

#include <gtest/gtest.h>

namespace nk::cli {
namespace {

ArgumentParser makeParser() {
  return ArgumentParser({
      {"cpu", 0, true, "LIST", ""},
      {"json", 0, false, "", ""},
      {"help", 'h', false, "", ""},
  });
}

TEST(ArgumentParser, ParsesSeparateAndInlineValues) {
  auto parsed = makeParser().parse({"--cpu", "0-3", "--json"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->value("cpu"), "0-3");
  EXPECT_TRUE(parsed->has("json"));
  EXPECT_TRUE(parsed->positionals.empty());

  auto inline_value = makeParser().parse({"--cpu=4,5"});
  ASSERT_TRUE(inline_value.ok());
  EXPECT_EQ(inline_value->value("cpu"), "4,5");
}

TEST(ArgumentParser, LaterOptionWins) {
  auto parsed = makeParser().parse({"--cpu", "1", "--cpu", "2"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->value("cpu"), "2");
}

TEST(ArgumentParser, KeepsPositionalsInOrder) {
  auto parsed = makeParser().parse({"a", "--json", "b", "--", "--cpu"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->positionals, (std::vector<std::string>{"a", "b", "--cpu"}));
  EXPECT_FALSE(parsed->has("cpu"));
}

TEST(ArgumentParser, ShortOption) {
  auto parsed = makeParser().parse({"-h"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->has("help"));
}

TEST(ArgumentParser, NegativeNumberIsPositional) {
  auto parsed = makeParser().parse({"-5"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->positionals, (std::vector<std::string>{"-5"}));
}

TEST(ArgumentParser, RejectsUnknownOptions) {
  auto long_option = makeParser().parse({"--bogus"});
  ASSERT_FALSE(long_option.ok());
  EXPECT_EQ(long_option.error().message, "unknown option '--bogus'");

  auto with_value = makeParser().parse({"--bogus=1"});
  ASSERT_FALSE(with_value.ok());
  EXPECT_EQ(with_value.error().message, "unknown option '--bogus'");

  auto short_option = makeParser().parse({"-x"});
  ASSERT_FALSE(short_option.ok());
  EXPECT_EQ(short_option.error().message, "unknown option '-x'");

  auto bundle = makeParser().parse({"-hx"});
  ASSERT_FALSE(bundle.ok());
  EXPECT_EQ(bundle.error().message, "unknown option '-hx'");
}

TEST(ArgumentParser, RejectsMissingValue) {
  auto parsed = makeParser().parse({"--cpu"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "option '--cpu' needs a value (LIST)");
}

TEST(ArgumentParser, RejectsValueForFlag) {
  auto parsed = makeParser().parse({"--json=yes"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "option '--json' takes no value");
}

TEST(ArgumentParser, EmptyInlineValueIsKept) {
  auto parsed = makeParser().parse({"--cpu="});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->value("cpu"), "");
}

TEST(ArgumentParser, StopsAtFirstPositional) {
  auto parsed = makeParser().parseUntilPositional({"--json", "freq", "set", "--cpu", "1"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->has("json"));
  EXPECT_FALSE(parsed->has("cpu"));
  EXPECT_EQ(parsed->rest, (std::vector<std::string>{"freq", "set", "--cpu", "1"}));
}

}  // namespace
}  // namespace nk::cli
