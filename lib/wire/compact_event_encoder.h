#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "wire/task_event_record.h"

namespace nk::wire {

// The compact form's encoding of one record (CompactEvents has the format),
// into room its caller has made: the header byte at one place, the varints
// at another. It holds what the next record is told apart from (the last
// record of each type, the last time), so every part begins with a fresh
// encoder. Both writers of the form use it: the shipper's
// CompactEventWriter, and the client library's event rings, which encode
// on the app's thread as the events happen.
class CompactEventEncoder {
 public:
  static constexpr int kFields = 4;  // task, a, b, c
  // The timestamp and four fields, ten bytes each at most.
  static constexpr size_t kMaxRecordValueBytes = 10 * (1 + kFields);

  // Writes the record's header byte at `header` and its varints from
  // `values`; returns where its varints end. Always inlined: a call an
  // event was a fifth of its cost.
  [[gnu::always_inline]] uint8_t* add(TaskEventType record_type, uint64_t timestamp_ns, uint64_t task, uint64_t a,
                                      uint64_t b, uint64_t c, uint8_t* header, uint8_t* values) {
    // Everything read into locals first: a byte store may alias any object,
    // so the members would be read again after each one.
    const auto type = static_cast<size_t>(record_type);
    // A type out of range (never captured) predicts from nothing and is
    // refused by the reader.
    static constexpr std::array<uint64_t, kFields> kNothing{};
    const std::array<uint64_t, kFields>& previous = type < kTaskEventTypeCount ? previous_[type] : kNothing;
    const uint64_t task_step = zigzag(task - previous[0]);
    const uint64_t a_step = zigzag(a - previous[1]);
    const uint64_t b_step = zigzag(b - previous[2]);
    const uint64_t c_step = zigzag(c - previous[3]);
    const uint64_t time_step = zigzag(timestamp_ns - timestamp_);
    *header = static_cast<uint8_t>((type & 0x0f) | (task_step != 0 ? 0x10 : 0) | (a_step != 0 ? 0x20 : 0) |
                                   (b_step != 0 ? 0x40 : 0) | (c_step != 0 ? 0x80 : 0));
    uint8_t* at = putVarint(values, time_step);
    if (task_step != 0) at = putVarint(at, task_step);
    if (a_step != 0) at = putVarint(at, a_step);
    if (b_step != 0) at = putVarint(at, b_step);
    if (c_step != 0) at = putVarint(at, c_step);
    timestamp_ = timestamp_ns;
    if (type < kTaskEventTypeCount) previous_[type] = {task, a, b, c};
    return at;
  }

  // As a fresh encoder: the next record begins a part of its own.
  void reset() {
    previous_ = {};
    timestamp_ = 0;
  }

 private:
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

  std::array<std::array<uint64_t, kFields>, kTaskEventTypeCount> previous_{};
  uint64_t timestamp_ = 0;
};

}  // namespace nk::wire
