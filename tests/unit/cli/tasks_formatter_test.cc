#include "cli/tasks_formatter.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;

GraphEvent event(GraphEvent::Type type, uint64_t task, int64_t ts, std::string_view function = {}) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.timestamp_ns = ts;
  e.function = function;
  return e;
}

// Two runs of "potrf" (1 and 3 us), one of "gemm" (10 us), one task
// running and one not queued.
TaskGraph sampleGraph() {
  using T = GraphEvent::Type;
  TaskGraph g;
  for (uint64_t id = 1; id <= 5; ++id) g.apply(event(T::kCreated, id, 0, id == 3 ? "gemm" : "potrf"));
  g.apply(event(T::kStarted, 1, 1000));
  g.apply(event(T::kFinished, 1, 2000));
  g.apply(event(T::kStarted, 2, 1000));
  g.apply(event(T::kFinished, 2, 4000));
  g.apply(event(T::kStarted, 3, 100));  // timestamps are never 0 (CLOCK_MONOTONIC)
  g.apply(event(T::kFinished, 3, 10100));
  g.apply(event(T::kStarted, 4, 500));
  GraphEvent edge = event(T::kDependence, 2, 0);
  edge.from = 1;
  edge.address = 0x10;
  g.apply(edge);
  return g;
}

TEST(TasksFormatter, StatsTextCountsStatesAndSortsFunctionsByTotalTime) {
  std::string text = TasksFormatter::statsText("session 7", sampleGraph());
  EXPECT_EQ(text.rfind("session 7: 5 tasks (not_queued 1, queued 0, running 1, finished 3), 1 edges (1 dependences)\n", 0), 0u)
      << text;
  size_t gemm = text.find("gemm"), potrf = text.find("potrf");
  ASSERT_NE(gemm, std::string::npos);
  ASSERT_NE(potrf, std::string::npos);
  EXPECT_LT(gemm, potrf) << text;  // 10 us total before 4 us
  EXPECT_NE(text.find("potrf        2     0.004      2.0     1.0     3.0"), std::string::npos) << text;
}

TEST(TasksFormatter, StatsJsonHasExactFigures) {
  auto json = nlohmann::json::parse(TasksFormatter::statsJson("session 7", sampleGraph()));
  EXPECT_EQ(json["source"], "session 7");
  EXPECT_EQ(json["tasks"], 5);
  EXPECT_EQ(json["edges"], 1);
  EXPECT_EQ(json["states"]["running"], 1);
  ASSERT_EQ(json["functions"].size(), 2u);
  EXPECT_EQ(json["functions"][0]["function"], "gemm");
  EXPECT_EQ(json["functions"][1]["function"], "potrf");
  EXPECT_EQ(json["functions"][1]["runs"], 2);
  EXPECT_EQ(json["functions"][1]["total_ns"], 4000);
  EXPECT_EQ(json["functions"][1]["mean_ns"], 2000);
  EXPECT_EQ(json["functions"][1]["min_ns"], 1000);
  EXPECT_EQ(json["functions"][1]["max_ns"], 3000);
}

TEST(TasksFormatter, NoFinishedTaskSaysSo) {
  TaskGraph g;
  g.apply(event(GraphEvent::Type::kCreated, 1, 0, "f"));
  EXPECT_NE(TasksFormatter::statsText("x", g).find("No task has finished yet."), std::string::npos);
}

TEST(TasksFormatter, SessionsShowStateAndRecording) {
  pb::SessionList list;
  auto* s = list.add_sessions();
  s->set_session_id(3);
  s->set_pid(42);
  s->set_tasks(20);
  s->set_edges(18);
  s->set_live(false);
  s->set_recording("/var/lib/nodekeeper/recordings/session-3-pid42.nkrec");
  s->set_program("./a.out 1");
  std::string text = TasksFormatter::sessionsText(list);
  EXPECT_NE(text.find("ended"), std::string::npos) << text;
  EXPECT_NE(text.find("session-3-pid42.nkrec"), std::string::npos) << text;
  auto json = nlohmann::json::parse(TasksFormatter::sessionsJson(list));
  EXPECT_EQ(json["sessions"][0]["live"], false);
  EXPECT_EQ(json["sessions"][0]["edges"], 18);
  EXPECT_EQ(json["sessions"][0]["recording"], "/var/lib/nodekeeper/recordings/session-3-pid42.nkrec");
  EXPECT_NE(TasksFormatter::sessionsText(pb::SessionList()).find("No task sessions"), std::string::npos);
}

TEST(TasksFormatter, SessionsSayWhenRecordingStopped) {
  pb::SessionList list;
  auto* quiet = list.add_sessions();
  quiet->set_session_id(3);
  quiet->set_recording("/r/session-3-pid42-uid0.nkrec");
  auto* stopped = list.add_sessions();
  stopped->set_session_id(4);
  stopped->set_live(true);
  stopped->set_recording("/r/session-4-pid43-uid1000.nkrec");
  stopped->set_recording_stopped("stopped: uid 1000's live recordings reached their quota of 2 GiB");
  std::string text = TasksFormatter::sessionsText(list);
  EXPECT_NE(text.find("session 4: recording stopped: uid 1000's live recordings reached their quota of 2 GiB\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("session 3: recording"), std::string::npos) << text;
  auto json = nlohmann::json::parse(TasksFormatter::sessionsJson(list));
  EXPECT_EQ(json["sessions"][0]["recording_stopped"], "");
  EXPECT_EQ(json["sessions"][1]["recording_stopped"], "stopped: uid 1000's live recordings reached their quota of 2 GiB");
}

}  // namespace
}  // namespace nk::cli
