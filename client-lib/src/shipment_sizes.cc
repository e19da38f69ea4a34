#include "shipment_sizes.h"

#include <algorithm>

#include "wire/compact_event_writer.h"
#include "wire/publish_limits.h"
#include "wire/task_function_name.h"

namespace nk::client {

ShipmentSizes ShipmentSizes::forLimit(std::optional<uint32_t> daemon_limit) {
  const size_t limit = std::max<size_t>(daemon_limit.value_or(wire::PublishLimits::kDefaultMessageBytes),
                                        wire::PublishLimits::kMinMessageBytes);
  ShipmentSizes sizes;
  sizes.name_room = limit / 4;
  sizes.message_cap = limit - sizes.name_room;
  sizes.part_events = std::clamp<size_t>((sizes.message_cap - kPartFraming) / wire::CompactEventWriter::kMaxRecordBytes,
                                         1, kPartEvents);
  sizes.message_bytes = std::min(kMessageBytes, sizes.message_cap);
  sizes.name_bytes = sizes.name_room - kNameFraming;
  sizes.names_message_bytes = limit - kPartFraming;
  return sizes;
}

size_t ShipmentSizes::worstPartBytes(size_t events) {
  return events * wire::CompactEventWriter::kMaxRecordBytes + kPartFraming;
}

void ShipmentSizes::fitName(std::string& name) const { wire::TaskFunctionName::cutToFit(name, name_bytes); }

}  // namespace nk::client
