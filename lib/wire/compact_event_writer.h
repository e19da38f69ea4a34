#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "wire/task_event_record.h"

namespace nk::wire {

// Writes one compact part in its split form (CompactEvents: the header bytes
// in one string, the varints in another) a record at a time, for a caller
// that works each record's timestamp out as it goes: the shipper converts a
// ring's ticks to nanoseconds and encodes in the one pass over the slots,
// instead of writing the times back into them and reading them all again (a
// chunk of 768 KiB is past the core's cache, and the write-back dirtied
// lines the app's thread then had to take back).
class CompactEventWriter {
 public:
  // Appends to `headers` and `values`; everything is there once flush() has
  // run (the destructor runs it).
  CompactEventWriter(std::string& headers, std::string& values) : headers_out_(headers), values_out_(values) {}
  ~CompactEventWriter() { flush(); }
  CompactEventWriter(const CompactEventWriter&) = delete;
  CompactEventWriter& operator=(const CompactEventWriter&) = delete;

  // The most one record takes: its header byte, and its timestamp and four
  // fields at ten bytes each.
  static constexpr size_t kMaxRecordBytes = 1 + 10 * 5;

  // `r` as it is, but at `timestamp_ns`. Always inlined: GCC keeps it a
  // call in the shipper's loop, and a call an event is a fifth of its cost.
  [[gnu::always_inline]] void add(const TaskEventRecord& r, uint64_t timestamp_ns) {
    if (header_at_ == headers_.data() + headers_.size()) flush();
    // Everything read into locals first and the position kept in one: a
    // byte store may alias any object, so the members (and `r`) would be
    // read again after each one.
    const auto type = static_cast<size_t>(r.type);
    const uint64_t fields[kFields] = {r.task_id, r.a, r.b, r.c};
    // A type out of range (never captured) predicts from nothing and is
    // refused by the reader.
    static constexpr std::array<uint64_t, kFields> kNothing{};
    const std::array<uint64_t, kFields>& previous = type < kTaskEventTypeCount ? previous_[type] : kNothing;
    const uint64_t task = zigzag(fields[0] - previous[0]);
    const uint64_t a = zigzag(fields[1] - previous[1]);
    const uint64_t b = zigzag(fields[2] - previous[2]);
    const uint64_t c = zigzag(fields[3] - previous[3]);
    const uint64_t step = zigzag(timestamp_ns - timestamp_);
    *header_at_++ = static_cast<uint8_t>((type & 0x0f) | (task != 0 ? 0x10 : 0) | (a != 0 ? 0x20 : 0) |
                                         (b != 0 ? 0x40 : 0) | (c != 0 ? 0x80 : 0));
    uint8_t* at = at_;
    at = putVarint(at, step);
    if (task != 0) at = putVarint(at, task);
    if (a != 0) at = putVarint(at, a);
    if (b != 0) at = putVarint(at, b);
    if (c != 0) at = putVarint(at, c);
    at_ = at;
    timestamp_ = timestamp_ns;
    if (type < kTaskEventTypeCount) previous_[type] = {fields[0], fields[1], fields[2], fields[3]};
  }
  void add(const TaskEventRecord& r) { add(r, r.timestamp_ns); }

  // Appends what is written so far to the output.
  void flush() {
    headers_out_.append(reinterpret_cast<const char*>(headers_.data()), static_cast<size_t>(header_at_ - headers_.data()));
    values_out_.append(reinterpret_cast<const char*>(values_.data()), static_cast<size_t>(at_ - values_.data()));
    header_at_ = headers_.data();
    at_ = values_.data();
  }

 private:
  static constexpr int kFields = 4;  // task, a, b, c
  // The timestamp and four fields, ten bytes each at most.
  static constexpr size_t kMaxRecordValueBytes = 10 * (1 + kFields);
  static_assert(kMaxRecordBytes == 1 + kMaxRecordValueBytes);
  // Records are encoded into blocks, then appended at once: a string's
  // append per field (a capacity check, a size update and a call each)
  // cost more than the encoding itself.
  static constexpr size_t kBlockRecords = 256;

  static uint64_t zigzag(uint64_t difference) {
    const auto d = static_cast<int64_t>(difference);
    return (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63);
  }

  // At most ten bytes, into room the caller has made.
  static uint8_t* putVarint(uint8_t* at, uint64_t v) {
    while (v >= 0x80) {
      *at++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *at++ = static_cast<uint8_t>(v);
    return at;
  }

  std::string& headers_out_;
  std::string& values_out_;
  // Every part starts from zeros, so it decodes on its own.
  std::array<std::array<uint64_t, kFields>, kTaskEventTypeCount> previous_{};
  uint64_t timestamp_ = 0;
  std::array<uint8_t, kBlockRecords> headers_;
  std::array<uint8_t, kBlockRecords * kMaxRecordValueBytes> values_;
  uint8_t* header_at_ = headers_.data();
  uint8_t* at_ = values_.data();
};

}  // namespace nk::wire
