#include "wire/compact_events.h"

#include <algorithm>
#include <array>
#include <bit>
#include <initializer_list>

#include "wire/compact_event_writer.h"

namespace nk::wire {

namespace {

constexpr int kFields = 4;  // task, a, b, c

uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

struct Predictions {
  std::array<std::array<uint64_t, kFields>, kTaskEventTypeCount> previous{};
  uint64_t timestamp = 0;
};

// How many fields a header's upper four bits name. A table, not
// std::popcount: without -mpopcnt that is a call into libgcc, and check()
// runs it once an event on the daemon's stream.
constexpr std::array<uint8_t, 16> kFieldsNamed = [] {
  std::array<uint8_t, 16> named{};
  for (unsigned bits = 0; bits < 16; ++bits) named[bits] = static_cast<uint8_t>(std::popcount(bits));
  return named;
}();

}  // namespace

void CompactEvents::encode(std::span<const TaskEventRecord> records, std::string& out) { encode(records, {}, out); }

void CompactEvents::encode(std::span<const TaskEventRecord> first, std::span<const TaskEventRecord> second,
                           std::string& out) {
  out.reserve(out.size() + (first.size() + second.size()) * kTypicalRecordBytes);
  CompactEventWriter writer(out);
  for (std::span<const TaskEventRecord> records : {first, second})
    for (const TaskEventRecord& r : records) writer.add(r);
}

std::string CompactEvents::decode(std::span<const std::byte> compact, std::vector<TaskEventRecord>& out,
                                  size_t max_records) {
  const size_t before = out.size();
  const auto* const begin = reinterpret_cast<const uint8_t*>(compact.data());
  const uint8_t* at = begin;
  const uint8_t* const end = begin + compact.size();
  // Every record takes at least two bytes, so there are at most `most`;
  // written in place (the daemon decodes millions a second), in room that
  // grows with what is decoded, not with what a hostile part claims.
  const size_t most = std::min(max_records, compact.size() / 2);
  size_t room = std::min<size_t>(most, 4096);
  out.resize(before + room);
  TaskEventRecord* next = out.data() + before;
  const TaskEventRecord* last = next + room;
  Predictions p;
  std::string fault;
  auto varint = [&](uint64_t& v) {
    // One byte is the common case: small differences.
    if (at < end && *at < 0x80) {
      v = *at++;
      return true;
    }
    v = 0;
    for (int shift = 0; shift < 70 && at < end; shift += 7) {
      const uint8_t byte = *at++;
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  };
  while (at < end) {
    const size_t offset = static_cast<size_t>(at - begin);
    if (next == last) {
      if (room == most) {
        fault = "byte " + std::to_string(offset) + ": more than " + std::to_string(max_records) + " events";
        break;
      }
      const size_t used = room;
      room = std::min(most, room * 2);
      out.resize(before + room);
      next = out.data() + before + used;
      last = out.data() + before + room;
    }
    const uint8_t header = *at++;
    const size_t type = header & 0x0f;
    if (type >= kTaskEventTypeCount) {
      fault = "byte " + std::to_string(offset) + ": unknown event type " + std::to_string(type);
      break;
    }
    uint64_t timestamp_step = 0;
    if (!varint(timestamp_step)) {
      fault = "byte " + std::to_string(offset) + ": a timestamp is cut off or too long";
      break;
    }
    std::array<uint64_t, kFields>& fields = p.previous[type];
    bool whole = true;
    for (int f = 0; f < kFields && whole; ++f) {
      if ((header & (1u << (4 + f))) == 0) continue;
      uint64_t residual = 0;
      whole = varint(residual);
      fields[f] += unzigzag(residual);
    }
    if (!whole) {
      fault = "byte " + std::to_string(offset) + ": a field is cut off or too long";
      break;
    }
    p.timestamp += unzigzag(timestamp_step);
    TaskEventRecord& r = *next++;
    r = TaskEventRecord{};
    r.type = static_cast<TaskEventType>(type);
    r.timestamp_ns = p.timestamp;
    r.task_id = fields[0];
    r.a = fields[1];
    r.b = fields[2];
    r.c = fields[3];
  }
  if (!fault.empty()) {
    out.resize(before);
    return "compact task events, " + fault;
  }
  out.resize(static_cast<size_t>(next - out.data()));
  return {};
}

std::string CompactEvents::check(std::span<const std::byte> compact, size_t max_records) {
  const auto* const begin = reinterpret_cast<const uint8_t*>(compact.data());
  const uint8_t* at = begin;
  const uint8_t* const end = begin + compact.size();
  // As decode() counts: a record takes at least two bytes, and a part that
  // would hold more than half its size in records is refused as too many.
  const size_t most = std::min(max_records, compact.size() / 2);
  size_t records = 0;
  while (at < end) {
    const size_t offset = static_cast<size_t>(at - begin);
    if (records == most)
      return "compact task events, byte " + std::to_string(offset) + ": more than " + std::to_string(max_records) +
             " events";
    ++records;
    const uint8_t header = *at++;
    const size_t type = header & 0x0f;
    if (type >= kTaskEventTypeCount)
      return "compact task events, byte " + std::to_string(offset) + ": unknown event type " + std::to_string(type);
    // The timestamp, then one varint per field the header names; each ends
    // at its first byte under 0x80, within 10 bytes (decode's bound).
    const int varints = 1 + kFieldsNamed[header >> 4];
    for (int v = 0; v < varints; ++v) {
      const uint8_t* const limit = std::min(end, at + 10);
      while (at < limit && *at >= 0x80) ++at;
      if (at == limit)
        return "compact task events, byte " + std::to_string(offset) +
               (v == 0 ? ": a timestamp is cut off or too long" : ": a field is cut off or too long");
      ++at;
    }
  }
  return {};
}

}  // namespace nk::wire
