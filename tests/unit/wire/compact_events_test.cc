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
  std::string written;
  {
    CompactEventWriter writer(written);
    for (size_t i = 0; i < records.size(); ++i) writer.add(records[i], retimed[i].timestamp_ns);
  }
  std::string expected;
  CompactEvents::encode(retimed, expected);
  EXPECT_EQ(written, expected);
  std::vector<TaskEventRecord> back;
  ASSERT_EQ(CompactEvents::decode(bytes(written), back, written.size()), "");
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
  v1::TaskEventBatch as_records, as_compact;
  as_records.add_packed()->set_records(std::string(reinterpret_cast<const char*>(records.data()),
                                                   records.size() * sizeof(TaskEventRecord)));
  CompactEvents::encode(records, *as_compact.add_packed()->mutable_compact());
  TaskEventTranslator one, two;
  std::vector<GraphEvent> from_records, from_compact;
  ASSERT_EQ(one.toGraphEvents(as_records, from_records), "");
  ASSERT_EQ(two.toGraphEvents(as_compact, from_compact), "");
  ASSERT_EQ(from_records.size(), from_compact.size());
  ASSERT_GT(from_records.size(), 300u);
  for (size_t i = 0; i < from_records.size(); ++i) {
    EXPECT_EQ(from_records[i].task, from_compact[i].task);
    EXPECT_EQ(from_records[i].timestamp_ns, from_compact[i].timestamp_ns);
    EXPECT_EQ(from_records[i].from, from_compact[i].from);
    EXPECT_EQ(from_records[i].address, from_compact[i].address);
  }
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

}  // namespace
}  // namespace nk::wire
