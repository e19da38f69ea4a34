#include "wire/publish_limits.h"

#include <charconv>

namespace nk::wire {

namespace {

std::optional<uint32_t> parseWithin(std::string_view value, uint32_t low, uint32_t high) {
  uint32_t parsed = 0;
  if (value.empty() || value.front() < '0' || value.front() > '9') return std::nullopt;  // no sign, no space
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed < low || parsed > high) return std::nullopt;
  return parsed;
}

}  // namespace

std::optional<uint32_t> PublishLimits::parseMessageBytes(std::string_view value) {
  return parseWithin(value, kMinMessageBytes, kMaxMessageBytes);
}

std::optional<uint32_t> PublishLimits::parseMessagesPerSecond(std::string_view value) {
  return parseWithin(value, 1, kMaxMessagesPerSecond);
}

}  // namespace nk::wire
