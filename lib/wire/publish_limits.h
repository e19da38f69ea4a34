#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace nk::wire {

// The limits a daemon holds a Publish stream to, which it names in the
// stream's initial metadata as it opens (next to the forms it reads): the
// largest message it takes (--max-message-bytes) and the messages a second
// a stream may send (--stream-messages-per-second). Past either it ends the
// stream RESOURCE_EXHAUSTED; a library that keeps under both loses nothing
// to an administrator's lower limits. A daemon that names neither (one from
// before) has the defaults, which the shipper's sizes fit.
struct PublishLimits {
  static constexpr std::string_view kMaxMessageBytesKey = "nodekeeper-max-message-bytes";
  static constexpr std::string_view kMessagesPerSecondKey = "nodekeeper-messages-per-second";
  // The daemon's own ranges for the two settings.
  static constexpr uint32_t kMinMessageBytes = 4096;
  static constexpr uint32_t kMaxMessageBytes = 1u << 30;
  static constexpr uint32_t kDefaultMessageBytes = 4u << 20;
  static constexpr uint32_t kMaxMessagesPerSecond = 10000000;

  // A value as the daemon writes it: decimal digits within the setting's
  // range; anything else is not a limit (nullopt).
  static std::optional<uint32_t> parseMessageBytes(std::string_view value);
  static std::optional<uint32_t> parseMessagesPerSecond(std::string_view value);

  std::optional<uint32_t> max_message_bytes;
  std::optional<uint32_t> messages_per_second;
};

}  // namespace nk::wire
