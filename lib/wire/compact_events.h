#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wire/task_event_record.h"

namespace nk::wire {

// The compact form of one thread's task events (tasks.proto's
// PackedEvents.compact): what the client library ships and the daemon
// records, a fifth to a tenth of the 48-byte records' size. Millions of
// tasks a second go through the socket and onto disk, and most of a
// record's bytes repeat the record before it of the same type (the same
// function, the thread's next serial, the same worker). So each field is
// sent as its difference from that field of the previous record of the
// same type, zigzagged into a LEB128 varint, and zero differences are left
// out:
//   1 byte   type (low 4 bits) | which of task, a, b, c differ (bits 4-7)
//   varint   timestamp difference (to the previous record of any type)
//   varints  the differing fields among task, a, b, c, in that order
// Every compact part starts from zeros, so it decodes on its own (a
// recording read from any frame, a part sent again).
//
// The split form (PackedEvents.compact_headers and compact_values, what the
// shipper sends) holds the same bytes apart: every record's header byte in
// one string, all their varints, in the same order, in the other. A reader
// then checks a part in two straight scans, eight bytes at a time (the
// header bytes give how many varints there must be; the values must hold
// that many ends, none more than ten bytes apart), where the interleaved
// form has to be walked record by record, a branch mispredicted every few
// bytes: that walk was half the daemon's CPU on a busy node.
class CompactEvents {
 public:
  struct Split {
    std::span<const std::byte> headers;
    std::span<const std::byte> values;
    // Over two strings' bytes (PackedEvents.compact_headers, compact_values).
    static Split of(std::string_view headers, std::string_view values) {
      return {std::as_bytes(std::span(headers)), std::as_bytes(std::span(values))};
    }
  };

  // What one part may hold. Decoded, a record takes 48 bytes where it may
  // have arrived in 2: without this bound a hostile 4 MiB message would
  // cost the daemon 100 MB per stream. The shipper sends at most 16384.
  static constexpr size_t kMaxRecordsPerPart = 65536;
  // What to reserve per record before encoding: the type byte, a one- or
  // two-byte timestamp and a few small fields (about 4 in a UTS run).
  static constexpr size_t kTypicalRecordBytes = 6;

  // Appends the encoding of `records` to `out`.
  static void encode(std::span<const TaskEventRecord> records, std::string& out);
  // The same for `first` then `second` as one part: a ring's events read in
  // place, where they wrap.
  static void encode(std::span<const TaskEventRecord> first, std::span<const TaskEventRecord> second,
                     std::string& out);
  // The split form of the same: appends to `headers` and `values`.
  static void encode(std::span<const TaskEventRecord> first, std::span<const TaskEventRecord> second,
                     std::string& headers, std::string& values);
  // Appends the decoded records to `out`. On malformed input (a type out of
  // range, a varint that runs past the end or over 10 bytes, more records
  // than `max_records`) returns what is wrong and leaves `out` as it was.
  static std::string decode(std::span<const std::byte> compact, std::vector<TaskEventRecord>& out,
                            size_t max_records);
  // What decode() would find wrong, or empty, without decoding: for a
  // daemon that records a part now and decodes it later. A scan of the
  // bytes, several times faster than decode().
  static std::string check(std::span<const std::byte> compact, size_t max_records);
  // The same two for the split form; a part of more than `max_records`
  // headers is refused before anything is decoded.
  static std::string decode(const Split& part, std::vector<TaskEventRecord>& out, size_t max_records);
  static std::string check(const Split& part, size_t max_records);
  // Appends `part` in the interleaved form, the same bytes in record order:
  // for a daemon from before the split form, which reads `compact` only.
  // Returns false, with `out` as it was, when the part does not add up.
  static bool interleave(const Split& part, std::string& out);

  // The daemon's word, as gRPC initial metadata on the Publish stream, that
  // it reads the split form: the value lists the forms it reads. A daemon
  // that sends none (one from before the split form took split parts as
  // empty, and recorded nothing) gets the interleaved form.
  static constexpr std::string_view kFormsMetadataKey = "nodekeeper-task-forms";
  static constexpr std::string_view kFormsRead = "records,compact,split";
  // Whether a kFormsMetadataKey value names the split form.
  static bool namesSplit(std::string_view forms);
};

}  // namespace nk::wire
