#pragma once

#include <cstdint>
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
  // A browser sends a host's cookies to every port on it, so each server's
  // cookie has its port in its name ("nk_ui_token_8080"): two servers used
  // from one browser (two users', or one user's two) do not overwrite each
  // other's.
  static std::string cookieName(uint16_t port);

  // 32 bytes from getrandom(), as 64 hex digits.
  static Result<UiToken> generate();
  explicit UiToken(std::string hex);

  const std::string& text() const { return hex_; }
  // Constant time in the candidate's content (its length is not secret).
  bool matches(std::string_view candidate) const;
  // Whether a request's Cookie (the one named `cookie_name`) or
  // Authorization header carries the token.
  bool authorises(std::string_view cookie_header, std::string_view authorization_header,
                  std::string_view cookie_name) const;
  // The Set-Cookie value for the first visit.
  std::string setCookieValue(std::string_view cookie_name) const;

  // One cookie's value out of a Cookie header ("a=1; nk_ui_token=T").
  static std::optional<std::string_view> cookieValue(std::string_view cookie_header, std::string_view name);
  // The token of "Bearer T".
  static std::optional<std::string_view> bearerToken(std::string_view authorization_header);

 private:
  std::string hex_;
};

}  // namespace nk::ui
