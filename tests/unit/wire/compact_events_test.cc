// CompactEvents is what libnodekeeper ships and the daemon records: every
// record must come back bit for bit, whatever its values, and hostile bytes
// must be refused without reading past them.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "taskgraph/task_event_translator.h"
#include "wire/compact_event_writer.h"
#include "wire/compact_events.h"

namespace nk::wire {
namespace {

namespace v1 = nodekeeper::v1;

std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

bool same(const TaskEventRecord& x, const TaskEventRecord& y) { return std::memcmp(&x, &y, sizeof x) == 0; }

CompactEvents::Split split(const std::string& headers, const std::string& values) {
  return CompactEvents::Split::of(headers, values);
}

// A batch of one part holding `records` in the 48-byte form.
v1::TaskEventBatch asRecords(const std::vector<TaskEventRecord>& records) {
  v1::TaskEventBatch batch;
  batch.add_packed()->set_records(
      std::string(reinterpret_cast<const char*>(records.data()), records.size() * sizeof(TaskEventRecord)));
  return batch;
}

// Graph events read from another form of the same records.
void expectSameEvents(const std::vector<GraphEvent>& expected, const std::vector<GraphEvent>& read) {
  ASSERT_EQ(expected.size(), read.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].task, read[i].task);
    EXPECT_EQ(expected[i].timestamp_ns, read[i].timestamp_ns);
    EXPECT_EQ(expected[i].from, read[i].from);
    EXPECT_EQ(expected[i].address, read[i].address);
  }
}

// A thread's events as OMPT produces them: creations with consecutive ids
// and one function, starts and finishes, dependences, taskwaits.
std::vector<TaskEventRecord> threadLike(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<TaskEventRecord> out;
  uint64_t ts = 1'000'000'000'000, serial = 0, slot = uint64_t{3} << 40;
  while (out.size() < n) {
    TaskEventRecord r{};
    ts += rng() % 500;
    r.timestamp_ns = ts;
    switch (rng() % 6) {
      case 0:
        r.type = TaskEventType::kCreated, r.task_id = slot | ++serial, r.a = slot | (serial / 4);
        r.b = 0x55d0c0de1234 + (rng() % 3) * 0x40, r.c = rng() % 8 == 0 ? static_cast<uint64_t>(-5) : 0;
        break;
      case 1:
        r.type = TaskEventType::kDependence, r.task_id = slot | serial, r.a = slot | (serial - 1 - rng() % 3);
        r.b = 0x7ffd00001000 + (rng() % 64) * 8, r.c = 1 + rng() % 3;
        break;
      case 2: r.type = TaskEventType::kStarted, r.task_id = slot | (rng() % (serial + 1)), r.a = 1; break;
      case 3: r.type = TaskEventType::kFinished, r.task_id = slot | (rng() % (serial + 1)); break;
      case 4: r.type = TaskEventType::kSync, r.task_id = slot | serial, r.a = 1, r.b = rng() % 2; break;
      default: r.type = TaskEventType::kQueued, r.task_id = rng(); break;  // any 64-bit id
    }
    out.push_back(r);
  }
  return out;
}

TEST(CompactEvents, EveryRecordComesBackExactly) {
  for (uint64_t seed : {1, 2, 3}) {
    auto records = threadLike(20000, seed);
    std::string compact;
    CompactEvents::encode(records, compact);
    std::vector<TaskEventRecord> back;
    ASSERT_EQ(CompactEvents::decode(bytes(compact), back, compact.size()), "");
    ASSERT_EQ(back.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) ASSERT_TRUE(same(back[i], records[i])) << "record " << i;
    // The point of it: far smaller than the 48-byte records.
    EXPECT_LT(compact.size() * 4, records.size() * sizeof(TaskEventRecord)) << compact.size();
  }
}

// Encoded in two pieces (a ring's events where it wraps), the part is the
// one the whole would make, byte for byte, wherever the cut falls.
TEST(CompactEvents, TwoPiecesEncodeAsTheirWhole) {
  auto records = threadLike(1000, 7);
  std::string whole;
  CompactEvents::encode(records, whole);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{999}, size_t{1000}}) {
    std::string pieces;
    const std::span<const TaskEventRecord> all(records);
    CompactEvents::encode(all.first(cut), all.subspan(cut), pieces);
    EXPECT_EQ(pieces, whole) << "cut at " << cut;
  }
}

// The shipper's one pass: records written with timestamps of the writer's
// choosing decode as those records at those times, and a writer that fills
// its block many times over loses nothing at the seams.
TEST(CompactEventWriter, WritesTheRecordsAtTheTimesItIsGiven) {
  auto records = threadLike(5000, 11);
  std::vector<TaskEventRecord> retimed = records;
  uint64_t ns = 7;
  for (TaskEventRecord& r : retimed) r.timestamp_ns = ns += r.timestamp_ns % 977;  // the "conversion"
  std::string headers, values;
  {
    CompactEventWriter writer(headers, values);
    for (size_t i = 0; i < records.size(); ++i) writer.add(records[i], retimed[i].timestamp_ns);
  }
  std::string expected_headers, expected_values;
  CompactEvents::encode(retimed, {}, expected_headers, expected_values);
  EXPECT_EQ(headers, expected_headers);
  EXPECT_EQ(values, expected_values);
  std::vector<TaskEventRecord> back;
  ASSERT_EQ(CompactEvents::decode(split(headers, values), back, records.size()), "");
  ASSERT_EQ(back.size(), retimed.size());
  for (size_t i = 0; i < retimed.size(); ++i) ASSERT_TRUE(same(back[i], retimed[i])) << "record " << i;
}

TEST(CompactEvents, ExtremeValuesAndBackwardSteps) {
  std::vector<TaskEventRecord> records(4);
  records[0].type = TaskEventType::kCreated;
  records[0].timestamp_ns = UINT64_MAX;
  records[0].task_id = UINT64_MAX;
  records[0].a = 0;
  records[0].b = uint64_t{1} << 63;
  records[0].c = UINT64_MAX;
  records[1] = records[0];
  records[1].timestamp_ns = 0;  // a step back by the whole range
  records[1].task_id = 1;
  records[2].type = TaskEventType::kRegionEnd;
  records[3] = records[0];
  std::string compact;
  CompactEvents::encode(records, compact);
  std::vector<TaskEventRecord> back;
  ASSERT_EQ(CompactEvents::decode(bytes(compact), back, 100), "");
  ASSERT_EQ(back.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) EXPECT_TRUE(same(back[i], records[i])) << "record " << i;
}

// The daemon and every recording read these bytes: an encoder made faster
// must write the very same ones. The hex is the encoding as first shipped;
// the digests cover long streams of every type and extreme values.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string hex(const std::string& s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {kDigits[c >> 4], kDigits[c & 15]};
  return out;
}

TEST(CompactEvents, TheEncodingIsTheWireFormatByteForByte) {
  std::vector<TaskEventRecord> records(5);
  records[0].type = TaskEventType::kCreated;
  records[0].timestamp_ns = 1000, records[0].task_id = 5, records[0].a = 1, records[0].b = 0x40;
  records[1] = records[0];
  records[1].timestamp_ns = 1100, records[1].task_id = 6;
  records[2].type = TaskEventType::kStarted;
  records[2].timestamp_ns = 1050, records[2].task_id = 5, records[2].a = 1;  // a step back
  records[3].type = TaskEventType::kFinished;
  records[3].timestamp_ns = 1050 + 300000, records[3].task_id = 5, records[3].c = UINT64_MAX;
  records[4].type = static_cast<TaskEventType>(kTaskEventTypeCount);  // never captured, still written
  records[4].timestamp_ns = 1050 + 300000, records[4].b = 7;
  std::string compact;
  CompactEvents::encode(records, compact);
  EXPECT_EQ(hex(compact), "70d00f0a02800110c8010233630a0294c0cf240a0149000e");

  std::string stream;
  for (uint64_t seed : {1, 2, 3}) {
    std::string part = "prefix";  // appended to, not replaced
    CompactEvents::encode(threadLike(20000, seed), part);
    EXPECT_EQ(part.rfind("prefix", 0), 0u);
    stream += part;
  }
  std::vector<TaskEventRecord> extremes(4);
  extremes[0].type = TaskEventType::kCreated;
  extremes[0].timestamp_ns = UINT64_MAX, extremes[0].task_id = UINT64_MAX, extremes[0].b = uint64_t{1} << 63;
  extremes[0].c = UINT64_MAX;
  extremes[1] = extremes[0];
  extremes[1].timestamp_ns = 0, extremes[1].task_id = 1;
  extremes[2].type = TaskEventType::kRegionEnd;
  extremes[3] = extremes[0];
  CompactEvents::encode(extremes, stream);
  EXPECT_EQ(stream.size(), 376611u);
  EXPECT_EQ(fnv1a(stream), 4967642350016171542ull);
}

TEST(CompactEvents, HostileBytesAreRefusedAndNothingIsKept) {
  auto records = threadLike(100, 9);
  std::string compact;
  CompactEvents::encode(records, compact);
  std::vector<TaskEventRecord> out(2);  // what was there stays
  std::string cut = compact.substr(0, compact.size() - 1);
  // Cut inside the last record: refused (or, cut at a record's end, fewer).
  std::string fault = CompactEvents::decode(bytes(cut), out, cut.size());
  if (!fault.empty()) {
    EXPECT_EQ(out.size(), 2u);
  }

  std::string bad_type = compact;
  bad_type[0] = static_cast<char>(0x0f);
  EXPECT_NE(CompactEvents::decode(bytes(bad_type), out, 1000), "");
  EXPECT_EQ(out.size(), 2u);

  std::string endless(20, static_cast<char>(0xff));
  endless[0] = 0x10;  // created, task differs: then an 11-byte varint
  fault = CompactEvents::decode(bytes(endless), out, 1000);
  EXPECT_NE(fault.find("too long"), std::string::npos) << fault;
  EXPECT_EQ(out.size(), 2u);

  fault = CompactEvents::decode(bytes(compact), out, 10);
  EXPECT_NE(fault.find("more than 10 events"), std::string::npos) << fault;
  EXPECT_EQ(out.size(), 2u);
}

// The daemon records a part after check() and decodes it later: check()
// must refuse exactly what decode() refuses, with the same words.
TEST(CompactEvents, CheckFindsWhatDecodeFinds) {
  auto records = threadLike(300, 21);
  std::string compact;
  CompactEvents::encode(records, compact);
  std::mt19937_64 rng(5);
  size_t refused = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string mutated = compact;
    switch (trial % 4) {
      case 0: mutated[rng() % mutated.size()] = static_cast<char>(rng()); break;
      case 1: mutated.resize(rng() % mutated.size()); break;
      case 2:
        for (char& c : mutated)
          if (rng() % 50 == 0) c = static_cast<char>(0x80 | rng());
        break;
      default:
        mutated.assign(rng() % 64, '\0');
        for (char& c : mutated) c = static_cast<char>(rng());
    }
    const size_t max_records = trial % 3 == 0 ? 100 : 1000;
    std::vector<TaskEventRecord> out;
    const std::string decoded = CompactEvents::decode(bytes(mutated), out, max_records);
    ASSERT_EQ(CompactEvents::check(bytes(mutated), max_records), decoded) << "trial " << trial;
    if (!decoded.empty()) ++refused;
  }
  EXPECT_GT(refused, 5000u);  // the mutations do make bad parts
  EXPECT_EQ(CompactEvents::check(bytes(compact), records.size()), "");
}

// The split form holds the interleaved form's bytes apart, and both read
// back as the records, in one piece or split where a ring wraps.
TEST(CompactEvents, TheSplitFormIsTheSameBytesApart) {
  for (uint64_t seed : {1, 2, 3}) {
    auto records = threadLike(20000, seed);
    std::string headers, values, interleaved;
    CompactEvents::encode(records, {}, headers, values);
    CompactEvents::encode(records, interleaved);
    ASSERT_EQ(headers.size(), records.size());
    EXPECT_EQ(headers.size() + values.size(), interleaved.size());
    std::vector<TaskEventRecord> from_split, from_interleaved;
    ASSERT_EQ(CompactEvents::decode(split(headers, values), from_split, records.size()), "");
    ASSERT_EQ(CompactEvents::decode(bytes(interleaved), from_interleaved, records.size()), "");
    ASSERT_EQ(from_split.size(), records.size());
    ASSERT_EQ(from_interleaved.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      ASSERT_TRUE(same(from_split[i], records[i])) << "record " << i;
      ASSERT_TRUE(same(from_interleaved[i], records[i])) << "record " << i;
    }
    EXPECT_EQ(CompactEvents::check(split(headers, values), records.size()), "");
    const size_t cut = 7777;
    std::string cut_headers, cut_values;
    CompactEvents::encode(std::span(records).first(cut), std::span(records).subspan(cut), cut_headers, cut_values);
    EXPECT_EQ(cut_headers, headers);
    EXPECT_EQ(cut_values, values);
  }
}

TEST(CompactEvents, TheSplitFormRefusesWhatDoesNotAddUp) {
  auto records = threadLike(1000, 8);
  std::string headers, values;
  CompactEvents::encode(records, {}, headers, values);
  std::vector<TaskEventRecord> out = {TaskEventRecord{}};
  auto decode = [&](const std::string& h, const std::string& v, size_t max_records) {
    return CompactEvents::decode(split(h, v), out, max_records);
  };
  std::string fault = decode(headers, values, 999);
  EXPECT_NE(fault.find("1000 events: more than 999"), std::string::npos) << fault;
  std::string bad_type = headers;
  bad_type[500] = static_cast<char>((bad_type[500] & 0xf0) | 0x0f);
  fault = decode(bad_type, values, 1000);
  EXPECT_NE(fault.find("event 500: unknown event type 15"), std::string::npos) << fault;
  fault = decode(headers, values.substr(0, values.size() - 1), 1000);
  EXPECT_NE(fault.find("event 999: a"), std::string::npos) << fault;
  fault = decode(headers, values + '\x01', 1000);
  EXPECT_NE(fault.find("the values go on for 1 bytes past the last event"), std::string::npos) << fault;
  std::string endless = values;
  endless.replace(100, 0, std::string(10, static_cast<char>(0x81)));
  EXPECT_NE(decode(headers, endless, 1000).find("cut off or too long"), std::string::npos);
  // A refused part leaves what was there before it.
  EXPECT_EQ(out.size(), 1u);
}

// What the shipper sends a daemon from before the split form: the split
// part's bytes in record order, or nothing when they do not add up.
TEST(CompactEvents, InterleavingASplitPartGivesTheInterleavedForm) {
  auto records = threadLike(3000, 9);
  std::string headers, values, interleaved;
  CompactEvents::encode(records, {}, headers, values);
  CompactEvents::encode(records, interleaved);
  std::string out = "kept";
  ASSERT_TRUE(CompactEvents::interleave(split(headers, values), out));
  EXPECT_EQ(out, "kept" + interleaved);
  for (const std::string& short_values : {values.substr(0, values.size() - 1), values + '\x01', std::string()}) {
    out = "kept";
    EXPECT_FALSE(CompactEvents::interleave(split(headers, short_values), out));
    EXPECT_EQ(out, "kept");
  }
}

TEST(CompactEvents, TheDaemonsFormsListNamesSplitOnlyAsAWholeName) {
  EXPECT_TRUE(CompactEvents::namesSplit(CompactEvents::kFormsRead));
  EXPECT_TRUE(CompactEvents::namesSplit("split"));
  EXPECT_TRUE(CompactEvents::namesSplit("compact,split,zstd"));
  EXPECT_FALSE(CompactEvents::namesSplit(""));
  EXPECT_FALSE(CompactEvents::namesSplit("records,compact"));
  EXPECT_FALSE(CompactEvents::namesSplit("splitter,unsplit"));
}

// As for the interleaved form, and through the scans' every path: runs of
// continuation bytes across and within words, headers naming more or
// fewer values, bytes past the end.
TEST(CompactEvents, TheSplitCheckFindsWhatDecodeFinds) {
  auto records = threadLike(300, 23);
  std::string headers, values;
  CompactEvents::encode(records, {}, headers, values);
  std::mt19937_64 rng(6);
  size_t refused = 0;
  for (int trial = 0; trial < 30000; ++trial) {
    std::string h = headers, v = values;
    switch (trial % 6) {
      case 0: h[rng() % h.size()] = static_cast<char>(rng()); break;
      case 1: v[rng() % v.size()] = static_cast<char>(rng()); break;
      case 2: v.replace(rng() % v.size(), 0, std::string(7 + rng() % 6, static_cast<char>(0x80 | rng()))); break;
      case 3: (rng() % 2 ? h : v).resize(rng() % (rng() % 2 ? h : v).size()); break;
      case 4:
        for (char& c : v)
          if (rng() % 40 == 0) c = static_cast<char>(c ^ 0x80);
        break;
      default:
        h.assign(rng() % 24, '\0');
        v.assign(rng() % 64, '\0');
        for (char& c : h) c = static_cast<char>(rng() % 2 ? rng() % 9 : rng());
        for (char& c : v) c = static_cast<char>(rng() % 3 ? rng() % 128 : rng());
    }
    const size_t max_records = trial % 5 == 0 ? 200 : 1000;
    std::vector<TaskEventRecord> out;
    const std::string decoded = CompactEvents::decode(split(h, v), out, max_records);
    ASSERT_EQ(CompactEvents::check(split(h, v), max_records), decoded) << "trial " << trial;
    if (!decoded.empty()) ++refused;
  }
  EXPECT_GT(refused, 10000u);
  EXPECT_LT(refused, 29000u);  // and some of them still add up
}

// One record for OMPT's one switch: a finish that names the task resuming
// at that moment reads as the finish and that task's start, in place, in
// the structured form too; records of the two as separate events read the
// same.
TEST(CompactEvents, AFinishThatResumesATaskReadsAsBothEvents) {
  auto record = [](TaskEventType type, uint64_t ts, uint64_t task, uint64_t a = 0, uint64_t c = 0) {
    TaskEventRecord r{};
    r.type = type, r.timestamp_ns = ts, r.task_id = task, r.a = a, r.c = c;
    return r;
  };
  const std::vector<TaskEventRecord> merged = {
      record(TaskEventType::kStarted, 100, 7, 2),
      record(TaskEventType::kFinished, 150, 7, 3, 2),  // 3 resumes on thread 2
      record(TaskEventType::kFailed, 170, 3, 9, 2),    // cancelled, 9 starts
      record(TaskEventType::kFinished, 190, 9),        // nothing resumes
  };
  const std::vector<TaskEventRecord> separate = {
      record(TaskEventType::kStarted, 100, 7, 2), record(TaskEventType::kFinished, 150, 7),
      record(TaskEventType::kStarted, 150, 3, 2), record(TaskEventType::kFailed, 170, 3),
      record(TaskEventType::kStarted, 170, 9, 2), record(TaskEventType::kFinished, 190, 9),
  };
  std::vector<GraphEvent> from_merged, from_separate;
  for (auto [records, out] : {std::pair{&merged, &from_merged}, std::pair{&separate, &from_separate}}) {
    v1::TaskEventBatch batch;
    batch.add_packed()->set_thread(4);
    CompactEvents::encode(*records, *batch.mutable_packed(0)->mutable_compact());
    TaskEventTranslator translator;
    ASSERT_EQ(translator.toGraphEvents(batch, *out), "");
  }
  ASSERT_EQ(from_merged.size(), 6u);
  ASSERT_EQ(from_separate.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(from_merged[i].type, from_separate[i].type) << i;
    EXPECT_EQ(from_merged[i].task, from_separate[i].task) << i;
    EXPECT_EQ(from_merged[i].timestamp_ns, from_separate[i].timestamp_ns) << i;
    EXPECT_EQ(from_merged[i].thread, from_separate[i].thread) << i;
  }
  EXPECT_EQ(from_merged[2].type, GraphEvent::Type::kStarted);
  EXPECT_EQ(from_merged[2].task, 3u);
  EXPECT_EQ(from_merged[2].thread, 2);

  v1::TaskEventBatch batch, structured;
  CompactEvents::encode(merged, *batch.add_packed()->mutable_compact());
  TaskEventTranslator translator;
  translator.toStructured(batch, structured);
  ASSERT_EQ(structured.events_size(), 6);
  EXPECT_EQ(structured.events(1).finished().task_id(), 7u);
  EXPECT_EQ(structured.events(2).started().task_id(), 3u);
  EXPECT_EQ(structured.events(2).thread(), 2u);
  EXPECT_EQ(structured.events(3).failed().task_id(), 3u);
  EXPECT_EQ(structured.events(4).started().task_id(), 9u);
}

TEST(CompactEvents, TheTranslatorReadsCompactPartsLikeRecords) {
  auto records = threadLike(500, 4);
  v1::TaskEventBatch as_records = asRecords(records), as_compact;
  CompactEvents::encode(records, *as_compact.add_packed()->mutable_compact());
  TaskEventTranslator one, two;
  std::vector<GraphEvent> from_records, from_compact;
  ASSERT_EQ(one.toGraphEvents(as_records, from_records), "");
  ASSERT_EQ(two.toGraphEvents(as_compact, from_compact), "");
  ASSERT_GT(from_records.size(), 300u);
  expectSameEvents(from_records, from_compact);
  // Past the per-part bound, a part is refused, whatever the message size.
  std::vector<TaskEventRecord> many(CompactEvents::kMaxRecordsPerPart + 1, records[0]);
  v1::TaskEventBatch too_many;
  CompactEvents::encode(many, *too_many.add_packed()->mutable_compact());
  std::vector<GraphEvent> refused;
  TaskEventTranslator four;
  EXPECT_NE(four.toGraphEvents(too_many, refused).find("more than 65536 events"), std::string::npos);
  many.pop_back();
  v1::TaskEventBatch at_bound;
  CompactEvents::encode(many, *at_bound.add_packed()->mutable_compact());
  EXPECT_EQ(four.toGraphEvents(at_bound, refused), "");

  v1::TaskEventBatch damaged = as_compact;
  damaged.mutable_packed(0)->mutable_compact()->pop_back();
  damaged.mutable_packed(0)->mutable_compact()->push_back(static_cast<char>(0x80));
  std::vector<GraphEvent> none;
  TaskEventTranslator three;
  EXPECT_NE(three.toGraphEvents(damaged, none), "");
}

TEST(CompactEvents, TheTranslatorReadsSplitPartsLikeRecords) {
  auto records = threadLike(500, 4);
  v1::TaskEventBatch as_records = asRecords(records), as_split;
  v1::PackedEvents* part = as_split.add_packed();
  CompactEvents::encode(records, {}, *part->mutable_compact_headers(), *part->mutable_compact_values());
  TaskEventTranslator one, two;
  std::vector<GraphEvent> from_records, from_split;
  ASSERT_EQ(one.toGraphEvents(as_records, from_records), "");
  ASSERT_EQ(two.check(as_split), "");
  ASSERT_EQ(two.toGraphEvents(as_split, from_split), "");
  ASSERT_GT(from_records.size(), 300u);
  expectSameEvents(from_records, from_split);
  std::vector<TaskEventRecord> many(CompactEvents::kMaxRecordsPerPart + 1, records[0]);
  v1::TaskEventBatch too_many;
  part = too_many.add_packed();
  CompactEvents::encode(many, {}, *part->mutable_compact_headers(), *part->mutable_compact_values());
  TaskEventTranslator three;
  EXPECT_NE(three.check(too_many).find("more than 65536"), std::string::npos);

  v1::TaskEventBatch damaged = as_split;
  damaged.mutable_packed(0)->mutable_compact_values()->back() = static_cast<char>(0x80);
  std::vector<GraphEvent> none;
  TaskEventTranslator four;
  const std::string fault = four.check(damaged);
  EXPECT_NE(fault.find("packed events of thread 0: compact task events, event 499"), std::string::npos) << fault;
  EXPECT_EQ(four.toGraphEvents(damaged, none), fault);
}

}  // namespace
}  // namespace nk::wire
