#include "wire/compact_events.h"

#include <array>

namespace nk::wire {

namespace {

constexpr size_t kTypes = static_cast<size_t>(TaskEventType::kRegionEnd) + 1;
constexpr int kFields = 4;  // task, a, b, c

uint64_t zigzag(uint64_t difference) {
  const auto d = static_cast<int64_t>(difference);
  return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
}

uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

void putVarint(std::string& out, uint64_t v) {
  char bytes[10];
  size_t n = 0;
  while (v >= 0x80) {
    bytes[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  bytes[n++] = static_cast<char>(v);
  out.append(bytes, n);
}

// false: runs past `end`, or longer than a 64-bit value can be.
bool getVarint(const std::byte*& at, const std::byte* end, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 70 && at < end; shift += 7) {
    const auto byte = static_cast<uint8_t>(*at++);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

struct Predictions {
  std::array<std::array<uint64_t, kFields>, kTypes> previous{};
  uint64_t timestamp = 0;
};

std::array<uint64_t, kFields> fieldsOf(const TaskEventRecord& r) { return {r.task_id, r.a, r.b, r.c}; }

}  // namespace

void CompactEvents::encode(std::span<const TaskEventRecord> records, std::string& out) {
  // Type byte plus a one- or two-byte timestamp and a few small fields.
  out.reserve(out.size() + records.size() * 6);
  Predictions p;
  for (const TaskEventRecord& r : records) {
    const auto type = static_cast<size_t>(r.type);
    std::array<uint64_t, kFields> residual{};
    uint8_t header = static_cast<uint8_t>(type & 0x0f);
    // A type out of range (never captured) predicts from nothing and is
    // refused by the reader.
    const auto fields = fieldsOf(r);
    for (int f = 0; f < kFields; ++f) {
      residual[f] = zigzag(fields[f] - (type < kTypes ? p.previous[type][f] : 0));
      if (residual[f] != 0) header |= static_cast<uint8_t>(1u << (4 + f));
    }
    out.push_back(static_cast<char>(header));
    putVarint(out, zigzag(r.timestamp_ns - p.timestamp));
    for (int f = 0; f < kFields; ++f)
      if (residual[f] != 0) putVarint(out, residual[f]);
    p.timestamp = r.timestamp_ns;
    if (type < kTypes) p.previous[type] = fields;
  }
}

std::string CompactEvents::decode(std::span<const std::byte> compact, std::vector<TaskEventRecord>& out,
                                  size_t max_records) {
  const size_t before = out.size();
  const std::byte* at = compact.data();
  const std::byte* const end = at + compact.size();
  Predictions p;
  auto fail = [&](std::string why) {
    out.resize(before);
    return "compact task events, byte " + std::to_string(at - compact.data()) + ": " + why;
  };
  while (at < end) {
    if (out.size() - before >= max_records) return fail("more than " + std::to_string(max_records) + " events");
    const auto header = static_cast<uint8_t>(*at++);
    const size_t type = header & 0x0f;
    if (type >= kTypes) return fail("unknown event type " + std::to_string(type));
    uint64_t timestamp_step = 0;
    if (!getVarint(at, end, timestamp_step)) return fail("a timestamp is cut off or too long");
    std::array<uint64_t, kFields> fields = p.previous[type];
    for (int f = 0; f < kFields; ++f) {
      if ((header & (1u << (4 + f))) == 0) continue;
      uint64_t residual = 0;
      if (!getVarint(at, end, residual)) return fail("a field is cut off or too long");
      fields[f] += unzigzag(residual);
    }
    TaskEventRecord r{};
    r.type = static_cast<TaskEventType>(type);
    r.timestamp_ns = p.timestamp + unzigzag(timestamp_step);
    r.task_id = fields[0];
    r.a = fields[1];
    r.b = fields[2];
    r.c = fields[3];
    out.push_back(r);
    p.timestamp = r.timestamp_ns;
    p.previous[type] = fields;
  }
  return {};
}

}  // namespace nk::wire
