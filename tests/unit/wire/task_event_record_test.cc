// The client library writes wire::TaskEventRecord as raw bytes into
// PackedEvents; the daemon and the CLI read them through TaskEventTranslator.
// Both sides compile the same header, and this test holds the reader to what
// the writer meant, field by field.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "taskgraph/task_event_translator.h"
#include "wire/task_event_record.h"

namespace nk::wire {
namespace {

namespace v1 = nodekeeper::v1;

std::string bytesOf(const std::vector<TaskEventRecord>& records) {
  std::string bytes(records.size() * sizeof(TaskEventRecord), '\0');
  std::memcpy(bytes.data(), records.data(), bytes.size());
  return bytes;
}

TaskEventRecord record(TaskEventType type, uint64_t ts, uint64_t task, uint64_t a = 0, uint64_t b = 0,
                       uint64_t c = 0) {
  TaskEventRecord r{};
  r.type = type;
  r.timestamp_ns = ts;
  r.task_id = task;
  r.a = a;
  r.b = b;
  r.c = c;
  return r;
}

v1::TaskEventBatch batchOf(const std::vector<TaskEventRecord>& records, uint32_t thread) {
  v1::TaskEventBatch batch;
  v1::FunctionName* name = batch.add_functions();
  name->set_key(0xabc);
  name->set_name("fib");
  v1::PackedEvents* packed = batch.add_packed();
  packed->set_thread(thread);
  packed->set_records(bytesOf(records));
  return batch;
}

TEST(TaskEventRecord, EveryGraphFieldTheWriterSetsIsWhatTheReaderGets) {
  const std::vector<TaskEventRecord> written = {
      record(TaskEventType::kCreated, 100, 7, /*parent*/ 3, /*function key*/ 0xabc, /*priority*/ static_cast<uint64_t>(-2)),
      record(TaskEventType::kDependence, 110, 7, /*from*/ 5, /*address*/ 0x1000, /*kind*/ 2),
      record(TaskEventType::kQueued, 120, 7),
      record(TaskEventType::kStarted, 130, 7, /*thread*/ 4),
      record(TaskEventType::kSync, 135, 7, 1, 0),
      record(TaskEventType::kFinished, 140, 7),
      record(TaskEventType::kFailed, 150, 8),
  };
  TaskEventTranslator translator;
  std::vector<GraphEvent> read;
  ASSERT_EQ(translator.toGraphEvents(batchOf(written, 2), read), "");
  // The sync record is not a graph event.
  ASSERT_EQ(read.size(), 6u);

  EXPECT_EQ(read[0].type, GraphEvent::Type::kCreated);
  EXPECT_EQ(read[0].timestamp_ns, 100);
  EXPECT_EQ(read[0].task, 7u);
  EXPECT_EQ(read[0].parent, 3u);
  EXPECT_EQ(read[0].function, "fib");
  EXPECT_EQ(read[0].priority, -2);

  EXPECT_EQ(read[1].type, GraphEvent::Type::kDependence);
  EXPECT_EQ(read[1].task, 7u);
  EXPECT_EQ(read[1].from, 5u);
  EXPECT_EQ(read[1].address, 0x1000u);
  EXPECT_EQ(read[1].kind, 2);

  EXPECT_EQ(read[2].type, GraphEvent::Type::kQueued);
  EXPECT_EQ(read[3].type, GraphEvent::Type::kStarted);
  EXPECT_EQ(read[3].thread, 4);
  EXPECT_EQ(read[4].type, GraphEvent::Type::kFinished);
  EXPECT_EQ(read[4].timestamp_ns, 140);
  EXPECT_EQ(read[5].type, GraphEvent::Type::kFailed);
  EXPECT_EQ(read[5].task, 8u);
}

TEST(TaskEventRecord, StructuredFormKeepsThreadsAndSyncs) {
  const std::vector<TaskEventRecord> written = {
      record(TaskEventType::kStarted, 10, 9, /*thread*/ 6),
      record(TaskEventType::kSync, 20, 9, /*kind*/ 1, /*end*/ 1),
      record(TaskEventType::kRegionEnd, 30, 0),
  };
  TaskEventTranslator translator;
  v1::TaskEventBatch structured;
  translator.toStructured(batchOf(written, 2), structured);
  ASSERT_EQ(structured.events_size(), 3);
  EXPECT_EQ(structured.events(0).thread(), 6u);  // the worker that ran it
  EXPECT_EQ(structured.events(0).started().task_id(), 9u);
  EXPECT_EQ(structured.events(1).thread(), 2u);  // the thread that shipped it
  EXPECT_EQ(structured.events(1).sync().kind(), static_cast<v1::TaskSync::Kind>(1));
  EXPECT_TRUE(structured.events(1).sync().end());
  EXPECT_TRUE(structured.events(2).region().end());
}

TEST(TaskEventRecord, ATornOrUnknownRecordIsRefusedWithAReason) {
  TaskEventTranslator translator;
  std::vector<GraphEvent> read;
  v1::TaskEventBatch torn = batchOf({record(TaskEventType::kQueued, 1, 1)}, 0);
  torn.mutable_packed(0)->mutable_records()->pop_back();
  EXPECT_NE(translator.toGraphEvents(torn, read).find("not a whole number of 48-byte records"), std::string::npos);

  TaskEventRecord unknown = record(TaskEventType::kQueued, 1, 1);
  unknown.type = static_cast<TaskEventType>(200);
  EXPECT_NE(translator.toGraphEvents(batchOf({unknown}, 0), read).find("unknown type 200"), std::string::npos);
}

}  // namespace
}  // namespace nk::wire
