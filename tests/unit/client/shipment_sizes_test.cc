// ShipmentSizes keeps every message the shipper sends within the largest
// the daemon takes: checked here on real encoded records and the real
// protobuf messages they travel in, at the limits an administrator may set.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.pb.h"
#include "shipment_sizes.h"
#include "wire/compact_event_writer.h"
#include "wire/publish_limits.h"

namespace nk::client {
namespace {

namespace v1 = nodekeeper::v1;

// `events` records whose timestamp and every field jump by 2^63 from the
// record before (zigzagged, 2^64 - 1: ten bytes each), the longest
// encoding there is.
v1::PackedEvents worstPart(size_t events) {
  v1::PackedEvents part;
  part.set_thread(UINT32_MAX);
  std::string& headers = *part.mutable_compact_headers();
  std::string& values = *part.mutable_compact_values();
  wire::CompactEventWriter writer(headers, values);
  for (size_t i = 0; i < events; ++i) {
    const uint64_t v = (i % 2 == 0) ? uint64_t{1} << 63 : 0;
    writer.add(wire::TaskEventRecord{wire::TaskEventType::kDependence, {}, v, v, v, v, v});
  }
  writer.flush();
  // Every record at its longest, or the test proves nothing.
  EXPECT_EQ(headers.size() + values.size(), events * wire::CompactEventWriter::kMaxRecordBytes);
  return part;
}

size_t validUtf8Prefix(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > s.size()) return i;
    for (size_t k = 1; k < length; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    i += length;
  }
  return i;
}

TEST(ShipmentSizes, AtTheDefaultLimitTheShipperKeepsItsSizes) {
  const ShipmentSizes unsaid = ShipmentSizes::forLimit(std::nullopt);
  const ShipmentSizes said = ShipmentSizes::forLimit(wire::PublishLimits::kDefaultMessageBytes);
  for (const ShipmentSizes& sizes : {unsaid, said}) {
    EXPECT_EQ(sizes.part_events, ShipmentSizes::kPartEvents);
    EXPECT_EQ(sizes.message_bytes, ShipmentSizes::kMessageBytes);
    // A message is sent once it reaches message_bytes, so the cap never
    // cuts one short: one byte under it plus the largest part still fits.
    EXPECT_LE(sizes.message_bytes - 1 + ShipmentSizes::worstPartBytes(sizes.part_events), sizes.message_cap);
  }
}

TEST(ShipmentSizes, TheLargestMessageFitsEveryLimitADaemonMayHave) {
  for (uint32_t limit : {4096u, 4097u, 5000u, 16384u, 65536u, 1000000u, 1u << 20, 4u << 20, 64u << 20}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    const ShipmentSizes sizes = ShipmentSizes::forLimit(limit);
    ASSERT_GE(sizes.part_events, 1u);
    EXPECT_LE(sizes.message_bytes, sizes.message_cap);
    EXPECT_EQ(sizes.message_cap + sizes.name_room, limit);
    // The shipper adds a part only while the worst case fits under the cap:
    // as many worst parts as that lets in, then names filling what is left.
    v1::TaskEventBatch batch;
    size_t planned = 0;
    while (planned + ShipmentSizes::worstPartBytes(sizes.part_events) <= sizes.message_cap && batch.packed_size() < 8) {
      *batch.add_packed() = worstPart(sizes.part_events);
      planned += ShipmentSizes::worstPartBytes(sizes.part_events);
    }
    ASSERT_GE(batch.packed_size(), 1);
    EXPECT_LE(batch.ByteSizeLong(), planned) << "a part took more than worstPartBytes";
    size_t room = sizes.name_room + (sizes.message_cap - planned);
    for (uint64_t key = UINT64_MAX;; --key) {
      std::string name(sizes.name_bytes + 100, 'n');
      sizes.fitName(name);
      if (ShipmentSizes::nameBytes(name) > room) break;
      room -= ShipmentSizes::nameBytes(name);
      v1::FunctionName* f = batch.add_functions();
      f->set_key(key);
      f->set_name(name);
    }
    EXPECT_LE(batch.ByteSizeLong(), limit);
    // A names-only message of the largest name fits too.
    v1::TaskEventBatch names;
    std::string name(limit, 'n');
    sizes.fitName(name);
    v1::FunctionName* f = names.add_functions();
    f->set_key(UINT64_MAX);
    f->set_name(name);
    EXPECT_LE(names.ByteSizeLong(), ShipmentSizes::nameBytes(name));
    EXPECT_LE(ShipmentSizes::nameBytes(name), sizes.names_message_bytes);
    EXPECT_LE(sizes.names_message_bytes, limit);
  }
}

TEST(ShipmentSizes, ALimitUnderTheDaemonsLeastIsTakenAsTheLeast) {
  const ShipmentSizes sizes = ShipmentSizes::forLimit(100);
  EXPECT_EQ(sizes.message_cap + sizes.name_room, wire::PublishLimits::kMinMessageBytes);
}

TEST(ShipmentSizes, ALongNameIsCutAtACharacterAndSaysSo) {
  const ShipmentSizes sizes = ShipmentSizes::forLimit(4096);
  std::string short_name = "fib (fib.c:31)";
  sizes.fitName(short_name);
  EXPECT_EQ(short_name, "fib (fib.c:31)");

  std::string ascii(sizes.name_bytes + 1, 'a');
  sizes.fitName(ascii);
  EXPECT_EQ(ascii.size(), sizes.name_bytes);
  EXPECT_EQ(ascii.substr(ascii.size() - 3), "...");

  // Two-, three- and four-byte characters, at every alignment to the cut.
  for (const std::string unit : {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x90\x9f"}) {
    for (size_t lead = 0; lead < 4; ++lead) {
      std::string name(lead, 'x');
      while (name.size() < sizes.name_bytes + 10) name += unit;
      sizes.fitName(name);
      EXPECT_LE(name.size(), sizes.name_bytes);
      EXPECT_EQ(validUtf8Prefix(name), name.size()) << "cut inside a character (lead " << lead << ")";
      EXPECT_EQ(name.substr(name.size() - 3), "...");
    }
  }
}

}  // namespace
}  // namespace nk::client
