#include "cli/ui/ui_token.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace nk::ui {
namespace {

const std::string kToken(64, 'a');

TEST(UiToken, GeneratesSixtyFourHexDigitsEachTimeDifferent) {
  std::set<std::string> seen;
  for (int i = 0; i < 8; ++i) {
    auto token = UiToken::generate();
    ASSERT_TRUE(token.ok());
    EXPECT_EQ(token->text().size(), 64u);
    EXPECT_EQ(token->text().find_first_not_of("0123456789abcdef"), std::string::npos) << token->text();
    seen.insert(token->text());
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(UiToken, MatchesOnlyTheWholeToken) {
  UiToken token(kToken);
  EXPECT_TRUE(token.matches(kToken));
  EXPECT_FALSE(token.matches(""));
  EXPECT_FALSE(token.matches(kToken.substr(1)));
  EXPECT_FALSE(token.matches(kToken + "a"));
  std::string last_differs = kToken;
  last_differs.back() = 'b';
  EXPECT_FALSE(token.matches(last_differs));
  std::string first_differs = kToken;
  first_differs.front() = 'A';
  EXPECT_FALSE(token.matches(first_differs));
}

TEST(UiToken, AnEmptyTokenMatchesNothing) {
  UiToken token("");
  EXPECT_FALSE(token.matches(""));
  EXPECT_FALSE(token.authorises("nk_ui_token_8080=", "Bearer ", "nk_ui_token_8080"));
}

TEST(UiToken, ReadsItsCookieAmongOthers) {
  EXPECT_EQ(UiToken::cookieValue("a=1; nk_ui_token=abc; b=2", "nk_ui_token"), "abc");
  EXPECT_EQ(UiToken::cookieValue("nk_ui_token=\"abc\"", "nk_ui_token"), "abc");
  EXPECT_EQ(UiToken::cookieValue("  nk_ui_token = abc ", "nk_ui_token"), "abc");
  EXPECT_FALSE(UiToken::cookieValue("x_nk_ui_token=abc; nk_ui_tokenx=abc", "nk_ui_token").has_value());
  EXPECT_FALSE(UiToken::cookieValue("", "nk_ui_token").has_value());
  EXPECT_FALSE(UiToken::cookieValue("nk_ui_token", "nk_ui_token").has_value());
}

TEST(UiToken, ReadsABearerHeader) {
  EXPECT_EQ(UiToken::bearerToken("Bearer abc"), "abc");
  EXPECT_EQ(UiToken::bearerToken("bearer  abc "), "abc");
  EXPECT_FALSE(UiToken::bearerToken("Basic abc").has_value());
  EXPECT_FALSE(UiToken::bearerToken("Bearer").has_value());
  EXPECT_FALSE(UiToken::bearerToken("").has_value());
}

TEST(UiToken, AuthorisesByCookieOrHeader) {
  UiToken token(kToken);
  EXPECT_TRUE(token.authorises("nk_ui_token_8080=" + kToken, "", "nk_ui_token_8080"));
  EXPECT_TRUE(token.authorises("", "Bearer " + kToken, "nk_ui_token_8080"));
  EXPECT_TRUE(token.authorises("nk_ui_token_8080=wrong", "Bearer " + kToken, "nk_ui_token_8080"));
  EXPECT_FALSE(token.authorises("nk_ui_token_8080=wrong", "Bearer wrong", "nk_ui_token_8080"));
  EXPECT_FALSE(token.authorises("other=" + kToken, "Basic " + kToken, "nk_ui_token_8080"));
  EXPECT_FALSE(token.authorises("", "", "nk_ui_token_8080"));
}

TEST(UiToken, SetsAStrictHttpOnlyCookie) {
  UiToken token(kToken);
  EXPECT_EQ(token.setCookieValue("nk_ui_token_8080"), "nk_ui_token_8080=" + kToken + "; HttpOnly; SameSite=Strict; Path=/");
  EXPECT_EQ(UiToken::cookieName(8080), "nk_ui_token_8080");
  // Another port's server's cookie, with this token even, is not this one's.
  EXPECT_FALSE(token.authorises("nk_ui_token_8081=" + kToken, "", "nk_ui_token_8080"));
}

}  // namespace
}  // namespace nk::ui
