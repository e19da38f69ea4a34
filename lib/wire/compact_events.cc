#include "wire/compact_events.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
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

// What both forms' decoders share: one record's varints read from `at`
// (up to `end`), its fields as differences from the previous record of its
// type.
class ValueReader {
 public:
  enum class Fault { kNone, kUnknownType, kTimestamp, kField };

  ValueReader(const uint8_t* at, const uint8_t* end) : at_(at), end_(end) {}

  [[gnu::always_inline]] Fault read(uint8_t header, TaskEventRecord& r) {
    const size_t type = header & 0x0f;
    if (type >= kTaskEventTypeCount) return Fault::kUnknownType;
    uint64_t timestamp_step = 0;
    if (!varint(timestamp_step)) return Fault::kTimestamp;
    std::array<uint64_t, kFields>& fields = p_.previous[type];
    for (int f = 0; f < kFields; ++f) {
      if ((header & (1u << (4 + f))) == 0) continue;
      uint64_t residual = 0;
      if (!varint(residual)) return Fault::kField;
      fields[f] += unzigzag(residual);
    }
    p_.timestamp += unzigzag(timestamp_step);
    r = TaskEventRecord{};
    r.type = static_cast<TaskEventType>(type);
    r.timestamp_ns = p_.timestamp;
    r.task_id = fields[0];
    r.a = fields[1];
    r.b = fields[2];
    r.c = fields[3];
    return Fault::kNone;
  }

  static std::string describe(Fault fault, uint8_t header) {
    switch (fault) {
      case Fault::kUnknownType: return "unknown event type " + std::to_string(header & 0x0f);
      case Fault::kTimestamp: return "a timestamp is cut off or too long";
      default: return "a field is cut off or too long";
    }
  }

  const uint8_t* at() const { return at_; }
  // The interleaved form's header byte, where the caller has made sure
  // there is one.
  uint8_t take() { return *at_++; }

 private:
  bool varint(uint64_t& v) {
    // One byte is the common case: small differences.
    if (at_ < end_ && *at_ < 0x80) {
      v = *at_++;
      return true;
    }
    v = 0;
    for (int shift = 0; shift < 70 && at_ < end_; shift += 7) {
      const uint8_t byte = *at_++;
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  const uint8_t* at_;
  const uint8_t* const end_;
  Predictions p_;
};

}  // namespace

void CompactEvents::encode(std::span<const TaskEventRecord> records, std::string& out) { encode(records, {}, out); }

void CompactEvents::encode(std::span<const TaskEventRecord> first, std::span<const TaskEventRecord> second,
                           std::string& out) {
  // The split form, interleaved: one encoder for both forms.
  std::string headers, values;
  encode(first, second, headers, values);
  (void)interleave(Split::of(headers, values), out);  // whole: it was just written
}

void CompactEvents::encode(std::span<const TaskEventRecord> first, std::span<const TaskEventRecord> second,
                           std::string& headers, std::string& values) {
  const size_t records = first.size() + second.size();
  headers.reserve(headers.size() + records);
  values.reserve(values.size() + records * (kTypicalRecordBytes - 1));
  CompactEventWriter writer(headers, values);
  for (std::span<const TaskEventRecord> piece : {first, second})
    for (const TaskEventRecord& r : piece) writer.add(r);
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
  std::string fault;
  ValueReader reader(at, end);
  while (reader.at() < end) {
    const size_t offset = static_cast<size_t>(reader.at() - begin);
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
    const uint8_t header = reader.take();
    if (const ValueReader::Fault f = reader.read(header, *next); f != ValueReader::Fault::kNone) {
      fault = "byte " + std::to_string(offset) + ": " + ValueReader::describe(f, header);
      break;
    }
    ++next;
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

std::string CompactEvents::decode(const Split& part, std::vector<TaskEventRecord>& out, size_t max_records) {
  const auto* const headers = reinterpret_cast<const uint8_t*>(part.headers.data());
  const size_t records = part.headers.size();
  if (records > max_records)
    return "compact task events, " + std::to_string(records) + " events: more than " + std::to_string(max_records);
  const size_t before = out.size();
  out.resize(before + records);
  const auto* const values = reinterpret_cast<const uint8_t*>(part.values.data());
  const uint8_t* const end = values + part.values.size();
  ValueReader reader(values, end);
  std::string fault;
  TaskEventRecord* next = out.data() + before;
  for (size_t i = 0; i < records; ++i) {
    if (const ValueReader::Fault f = reader.read(headers[i], *next); f != ValueReader::Fault::kNone) {
      fault = "event " + std::to_string(i) + ": " + ValueReader::describe(f, headers[i]);
      break;
    }
    ++next;
  }
  if (fault.empty() && reader.at() != end)
    fault = "the values go on for " + std::to_string(end - reader.at()) + " bytes past the last event";
  if (!fault.empty()) {
    out.resize(before);
    return "compact task events, " + fault;
  }
  return {};
}

namespace {

constexpr uint64_t everyByte(uint8_t byte) { return 0x0101010101010101ull * byte; }

// The sum of a word's eight bytes, each under 32.
uint64_t byteSum(uint64_t word) { return (word * everyByte(1)) >> 56; }

uint64_t loadWord(const uint8_t* at) {
  uint64_t word;
  std::memcpy(&word, at, sizeof word);
  return word;
}

// Whether decode() would take the part, in two scans without a branch that
// depends on the bytes (but the rare one on a run of continuation bytes).
bool splitIsWhole(const CompactEvents::Split& part, size_t max_records) {
  const auto* const headers = reinterpret_cast<const uint8_t*>(part.headers.data());
  const size_t records = part.headers.size();
  if (records > max_records) return false;
  // A type's low four bits plus this carry into bit 7 when they name no type.
  constexpr uint64_t kTypeCarry = everyByte(0x80 - kTaskEventTypeCount);
  uint64_t unknown_types = 0;
  uint64_t varints = records;  // each record's timestamp
  size_t i = 0;
  for (; i + 8 <= records; i += 8) {
    const uint64_t word = loadWord(headers + i);
    unknown_types |= ((word & everyByte(0x0f)) + kTypeCarry) & everyByte(0x80);
    // Each byte's four field bits counted in place (0 to 4 a byte).
    uint64_t fields = (word >> 4) & everyByte(0x0f);
    fields -= (fields >> 1) & everyByte(0x55);
    fields = (fields & everyByte(0x33)) + ((fields >> 2) & everyByte(0x33));
    varints += byteSum(fields);
  }
  for (; i < records; ++i) {
    unknown_types |= (headers[i] & 0x0f) >= kTaskEventTypeCount;
    varints += kFieldsNamed[headers[i] >> 4];
  }
  if (unknown_types != 0) return false;

  // The values must hold exactly `varints` ends (bytes under 0x80), the last
  // byte one of them, with fewer than ten continuation bytes in a row.
  const auto* const values = reinterpret_cast<const uint8_t*>(part.values.data());
  const size_t size = part.values.size();
  uint64_t ends = 0;
  unsigned run = 0;  // continuation bytes since the last end
  size_t at = 0;
  for (; at + 8 <= size; at += 8) {
    const uint64_t end_bits = ~loadWord(values + at) & everyByte(0x80);
    ends += byteSum(end_bits >> 7);
    if (end_bits == 0) [[unlikely]] {
      run += 8;
      if (run >= 10) return false;
      continue;
    }
    if (run + static_cast<unsigned>(std::countr_zero(end_bits) >> 3) >= 10) return false;
    run = static_cast<unsigned>(std::countl_zero(end_bits) >> 3);
  }
  for (; at < size; ++at) {
    if (values[at] < 0x80) {
      ++ends;
      run = 0;
    } else if (++run >= 10) {
      return false;
    }
  }
  return run == 0 && ends == varints;
}

}  // namespace

bool CompactEvents::interleave(const Split& part, std::string& out) {
  const auto* const headers = reinterpret_cast<const uint8_t*>(part.headers.data());
  const auto* const values = reinterpret_cast<const uint8_t*>(part.values.data());
  const size_t before = out.size();
  out.reserve(before + part.headers.size() + part.values.size());
  size_t at = 0;
  for (size_t i = 0; i < part.headers.size(); ++i) {
    out.push_back(static_cast<char>(headers[i]));
    const size_t first = at;
    for (uint8_t varint = 0; varint < 1 + kFieldsNamed[headers[i] >> 4]; ++varint) {
      while (at < part.values.size() && values[at] >= 0x80) ++at;
      if (at == part.values.size()) {
        out.resize(before);
        return false;
      }
      ++at;
    }
    out.append(reinterpret_cast<const char*>(values + first), at - first);
  }
  if (at == part.values.size()) return true;
  out.resize(before);
  return false;
}

bool CompactEvents::namesSplit(std::string_view forms) {
  while (!forms.empty()) {
    const size_t comma = forms.find(',');
    if (forms.substr(0, comma) == "split") return true;
    if (comma == std::string_view::npos) break;
    forms.remove_prefix(comma + 1);
  }
  return false;
}

std::string CompactEvents::check(const Split& part, size_t max_records) {
  if (splitIsWhole(part, max_records)) return {};
  // Refused: decode() says why, in its words (a hostile part's cost, once).
  std::vector<TaskEventRecord> scratch;
  std::string fault = decode(part, scratch, max_records);
  return fault.empty() ? "compact task events: the split form does not add up" : fault;
}

}  // namespace nk::wire
