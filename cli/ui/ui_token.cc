#include "cli/ui/ui_token.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cctype>
#include <cstring>

namespace nk::ui {

Result<UiToken> UiToken::generate() {
  std::array<uint8_t, 32> bytes{};
  size_t filled = 0;
  while (filled < bytes.size()) {
    ssize_t got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return internalError(std::string("getrandom: ") + std::strerror(errno));
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 0xf]);
  }
  return UiToken(std::move(hex));
}

UiToken::UiToken(std::string hex) : hex_(std::move(hex)) {}

bool UiToken::matches(std::string_view candidate) const {
  if (candidate.size() != hex_.size() || hex_.empty()) return false;
  // Every byte is looked at whatever the first difference: the time taken
  // says nothing about how much of a guess was right.
  volatile uint8_t difference = 0;
  for (size_t i = 0; i < hex_.size(); ++i)
    difference = difference | static_cast<uint8_t>(hex_[i] ^ candidate[i]);
  return difference == 0;
}

std::string UiToken::cookieName(uint16_t port) { return "nk_ui_token_" + std::to_string(port); }

bool UiToken::authorises(std::string_view cookie_header, std::string_view authorization_header,
                         std::string_view cookie_name) const {
  bool by_cookie = false, by_header = false;
  if (auto value = cookieValue(cookie_header, cookie_name)) by_cookie = matches(*value);
  if (auto value = bearerToken(authorization_header)) by_header = matches(*value);
  return by_cookie || by_header;
}

std::string UiToken::setCookieValue(std::string_view cookie_name) const {
  return std::string(cookie_name) + "=" + hex_ + "; HttpOnly; SameSite=Strict; Path=/";
}

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string_view> UiToken::cookieValue(std::string_view cookie_header, std::string_view name) {
  while (!cookie_header.empty()) {
    size_t end = cookie_header.find(';');
    std::string_view pair = trimmed(cookie_header.substr(0, end));
    cookie_header = end == std::string_view::npos ? std::string_view() : cookie_header.substr(end + 1);
    size_t equals = pair.find('=');
    if (equals == std::string_view::npos) continue;
    if (trimmed(pair.substr(0, equals)) != name) continue;
    std::string_view value = trimmed(pair.substr(equals + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
  return std::nullopt;
}

std::optional<std::string_view> UiToken::bearerToken(std::string_view authorization_header) {
  std::string_view header = trimmed(authorization_header);
  constexpr std::string_view kScheme = "Bearer ";
  if (header.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(header[i])) != std::tolower(static_cast<unsigned char>(kScheme[i])))
      return std::nullopt;
  return trimmed(header.substr(kScheme.size()));
}

}  // namespace nk::ui
