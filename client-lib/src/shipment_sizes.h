#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nk::client {

// How the shipper cuts what it sends so that no message passes the largest
// the daemon takes (it names it as the Publish stream opens; past it the
// stream ends and every event after is lost). Events go in parts of at most
// `part_events`; a message is sent once its parts reach `message_bytes`,
// and a part that could take it past `message_cap` waits for the next one.
// The rest of the limit is for the function names that go with the
// events, each cut to `name_bytes`. At the default limit (4 MiB) these are
// the sizes the shipper has always used.
struct ShipmentSizes {
  // A ring's events taken in one go at the most (in as many parts as the
  // ring's blocks they span): 16384 records of CompactEventWriter's largest
  // (51 bytes) are 836 KiB.
  static constexpr size_t kPartEvents = 16384;
  // About 60,000 events of a UTS-shaped program: on a busy node each
  // message costs a wake-up or two on both sides.
  static constexpr size_t kMessageBytes = size_t{256} << 10;
  // Bytes of a part besides its records (the field tags and lengths, the
  // thread), and of a name besides its text (the key, tags, lengths).
  static constexpr size_t kPartFraming = 32;
  static constexpr size_t kNameFraming = 24;

  size_t part_events = kPartEvents;
  size_t message_bytes = kMessageBytes;
  size_t message_cap = 0;
  // What names may add to a message of events: the limit less message_cap.
  size_t name_room = 0;
  size_t name_bytes = 0;
  // A message of names alone (those that did not fit beside the events)
  // is sent before it would pass this.
  size_t names_message_bytes = 0;

  // For a daemon that takes messages of `daemon_limit` bytes at the most
  // (nullopt: it did not say, so gRPC's default, which older daemons have).
  static ShipmentSizes forLimit(std::optional<uint32_t> daemon_limit);
  // The most a part of `events` events can add to a message.
  static size_t worstPartBytes(size_t events);
  // What a name adds to a message.
  static size_t nameBytes(const std::string& name) { return name.size() + kNameFraming; }
  // `name` cut to name_bytes at a character's start (a string field must
  // stay UTF-8, or the daemon refuses the whole message), marked as cut.
  void fitName(std::string& name) const;
};

}  // namespace nk::client
