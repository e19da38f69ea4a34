#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "wire/compact_event_encoder.h"
#include "wire/task_event_record.h"

namespace nk::wire {

// Writes one compact part in its split form (CompactEvents: the header bytes
// in one string, the varints in another) a record at a time: CompactEvents'
// encoders, and the client library's rings for the rest of a block the
// shipper took part of while it was being written.
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

  // `r` as it is, but at `timestamp_ns`.
  [[gnu::always_inline]] void add(const TaskEventRecord& r, uint64_t timestamp_ns) {
    if (header_at_ == headers_.data() + headers_.size()) flush();
    at_ = encoder_.add(r.type, timestamp_ns, r.task_id, r.a, r.b, r.c, header_at_++, at_);
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
  static constexpr size_t kMaxRecordValueBytes = CompactEventEncoder::kMaxRecordValueBytes;
  static_assert(kMaxRecordBytes == 1 + kMaxRecordValueBytes);
  // Records are encoded into blocks, then appended at once: a string's
  // append per field (a capacity check, a size update and a call each)
  // cost more than the encoding itself.
  static constexpr size_t kBlockRecords = 256;

  std::string& headers_out_;
  std::string& values_out_;
  // Every part starts from zeros, so it decodes on its own.
  CompactEventEncoder encoder_;
  std::array<uint8_t, kBlockRecords> headers_;
  std::array<uint8_t, kBlockRecords * kMaxRecordValueBytes> values_;
  uint8_t* header_at_ = headers_.data();
  uint8_t* at_ = values_.data();
};

}  // namespace nk::wire
