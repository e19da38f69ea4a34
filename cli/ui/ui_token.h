#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace nk::ui {

// The secret in the URL `nodekeeper ui` prints: whoever holds it acts as
// the user who ran the server, so it is 32 random bytes, compared in
// constant time, and accepted only from the cookie the first visit sets or
// a Bearer header (never from a query string after that first visit).
class UiToken {
 public:
  static constexpr std::string_view kCookieName = "nk_ui_token";

  // 32 bytes from getrandom(), as 64 hex digits.
  static Result<UiToken> generate();
  explicit UiToken(std::string hex);

  const std::string& text() const { return hex_; }
  // Constant time in the candidate's content (its length is not secret).
  bool matches(std::string_view candidate) const;
  // Whether a request's Cookie or Authorization header carries the token.
  bool authorises(std::string_view cookie_header, std::string_view authorization_header) const;
  // The Set-Cookie value for the first visit.
  std::string setCookieValue() const;

  // One cookie's value out of a Cookie header ("a=1; nk_ui_token=T").
  static std::optional<std::string_view> cookieValue(std::string_view cookie_header, std::string_view name);
  // The token of "Bearer T".
  static std::optional<std::string_view> bearerToken(std::string_view authorization_header);

 private:
  std::string hex_;
};

}  // namespace nk::ui
