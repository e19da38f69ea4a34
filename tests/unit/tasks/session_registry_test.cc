#include "tasks/session_registry.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "taskgraph/recording_reader.h"
#include "testlib/temp_dir.h"

namespace nk {
namespace {

namespace fs = std::filesystem;

class SessionRegistryTest : public ::testing::Test {
 protected:

  static std::vector<GraphEvent> twoTasks(uint64_t first) {
    GraphEvent a, b, edge;
    a.task = first;
    a.function = "f";
    b.task = first + 1;
    b.function = "f";
    edge.type = GraphEvent::Type::kDependence;
    edge.from = first;
    edge.task = first + 1;
    edge.address = 0x40;
    return {a, b, edge};
  }

  test::TempDir dir_{"sessions-test"};
};

TEST_F(SessionRegistryTest, AnEndedSessionKeepsItsCountsAndRecordingButNotItsGraph) {
  SessionRegistry registry(dir_ / "recordings");
  auto id = registry.open(42, 1000, "prog --flag");
  ASSERT_TRUE(id.ok());
  const std::string frame = "frame-bytes";
  auto bytes = std::as_bytes(std::span(frame.data(), frame.size()));
  ASSERT_TRUE(registry.append(*id, bytes, twoTasks(1)).ok());
  ASSERT_TRUE(registry.append(*id, bytes, twoTasks(3)).ok());
  auto live = registry.info(*id);
  ASSERT_TRUE(live);
  EXPECT_TRUE(live->live);
  EXPECT_EQ(live->tasks, 4u);
  EXPECT_EQ(live->edges, 2u);
  EXPECT_EQ(live->events, 6u);

  registry.close(*id);
  auto ended = registry.info(*id);
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->live);
  EXPECT_EQ(ended->tasks, 4u);
  EXPECT_EQ(ended->edges, 2u);
  EXPECT_EQ(ended->recording.filename(), "session-1-pid42.nkrec");
  auto reader = RecordingReader::open(ended->recording);
  ASSERT_TRUE(reader.ok());
  int frames = 0;
  while (auto payload = reader->next()) {
    EXPECT_EQ(payload->size(), frame.size());
    ++frames;
  }
  EXPECT_EQ(frames, 2);
  EXPECT_FALSE(registry.append(999, bytes, twoTasks(5)).ok());
}

TEST_F(SessionRegistryTest, UsersSeeTheirOwnSessions) {
  SessionRegistry registry(dir_ / "recordings");
  ASSERT_TRUE(registry.open(1, 1000, "a").ok());
  ASSERT_TRUE(registry.open(2, 1001, "b").ok());
  ASSERT_TRUE(registry.open(3, 1000, "c").ok());
  EXPECT_EQ(registry.list().size(), 3u);
  auto mine = registry.list(1000);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].program, "a");
  EXPECT_EQ(mine[1].program, "c");
}

}  // namespace
}  // namespace nk
