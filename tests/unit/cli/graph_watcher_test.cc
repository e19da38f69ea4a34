#include "cli/graph_watcher.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "taskgraph/graph_exporter.h"

namespace nk::cli {
namespace {

namespace fs = std::filesystem;

GraphEvent created(uint64_t task, std::string_view function) {
  GraphEvent e;
  e.type = GraphEvent::Type::kCreated;
  e.task = task;
  e.timestamp_ns = 100 * static_cast<int64_t>(task);
  e.function = function;
  return e;
}

GraphEvent dependence(uint64_t from, uint64_t to) {
  GraphEvent e;
  e.type = GraphEvent::Type::kDependence;
  e.task = to;
  e.from = from;
  e.address = 0x40;
  return e;
}

// Two tasks and the edge between them, as one batch brings them.
std::vector<GraphEvent> twoTasks() { return {created(1, "produce"), created(2, "consume"), dependence(1, 2)}; }

std::string readFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

class GraphWatcherTest : public ::testing::Test {
 protected:
  nk::test::TempDir tmp_{"graph-watcher"};
  const fs::path dir_ = tmp_.path();
  std::ostringstream out_, err_;
};

TEST_F(GraphWatcherTest, NothingAppliedIsNoChange) {
  GraphWatcher watcher({.format = "dot", .path = (dir_ / "g.dot").string()}, out_, err_);
  EXPECT_FALSE(watcher.changed());
  watcher.apply({});
  EXPECT_FALSE(watcher.changed());
  std::vector<GraphEvent> events = twoTasks();
  watcher.apply(events);
  EXPECT_TRUE(watcher.changed());
}

TEST_F(GraphWatcherTest, RefreshReplacesFileWithTheGraphAndSaysSo) {
  const fs::path path = dir_ / "g.dot";
  {
    std::ofstream stale(path);
    stale << "an older drawing\n";
  }
  GraphWatcher watcher({.format = "dot", .path = path.string()}, out_, err_);
  std::vector<GraphEvent> events = twoTasks();
  watcher.apply(events);

  Status refreshed = watcher.refresh();
  ASSERT_TRUE(refreshed) << refreshed.error().message;

  TaskGraph expected;
  for (const GraphEvent& e : events) expected.apply(e);
  std::ostringstream expected_dot;
  GraphExporter::dot(expected, expected_dot);
  EXPECT_EQ(readFile(path), expected_dot.str());
  EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
  EXPECT_FALSE(watcher.changed());
  EXPECT_EQ(err_.str(), "graph: 2 tasks, 1 edges -> " + path.string() + "\n");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(GraphWatcherTest, JsonProgressGoesToStandardOutput) {
  const fs::path path = dir_ / "g.dot";
  GraphWatcher watcher({.format = "dot", .path = path.string(), .json = true}, out_, err_);
  std::vector<GraphEvent> events = twoTasks();
  watcher.apply(events);
  ASSERT_TRUE(watcher.refresh());
  std::vector<GraphEvent> more = {created(3, "consume"), dependence(1, 3)};
  watcher.apply(more);
  ASSERT_TRUE(watcher.refresh());

  std::istringstream lines(out_.str());
  std::vector<nlohmann::json> progress;
  for (std::string line; std::getline(lines, line);) progress.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(progress.size(), 2u) << out_.str();
  EXPECT_EQ(progress[0]["tasks"], 2);
  EXPECT_EQ(progress[0]["edges"], 1);
  EXPECT_EQ(progress[1]["tasks"], 3);
  EXPECT_EQ(progress[1]["edges"], 2);
  EXPECT_EQ(progress[1]["out"], path.string());
  EXPECT_EQ(err_.str(), "");
}

TEST_F(GraphWatcherTest, SvgIsRenderedByGraphviz) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "Graphviz's dot is not installed";
  const fs::path path = dir_ / "g.svg";
  GraphWatcher watcher({.format = "svg", .path = path.string()}, out_, err_);
  std::vector<GraphEvent> events = twoTasks();
  watcher.apply(events);
  Status refreshed = watcher.refresh();
  ASSERT_TRUE(refreshed) << refreshed.error().message;
  const std::string svg = readFile(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos) << svg.substr(0, 200);
  EXPECT_NE(svg.find("produce"), std::string::npos);
}

TEST_F(GraphWatcherTest, AnUnwritablePlaceFailsWithoutReportingProgress) {
  const fs::path path = dir_ / "missing" / "g.dot";
  GraphWatcher watcher({.format = "dot", .path = path.string()}, out_, err_);
  std::vector<GraphEvent> events = twoTasks();
  watcher.apply(events);
  Status refreshed = watcher.refresh();
  ASSERT_FALSE(refreshed);
  EXPECT_NE(refreshed.error().message.find("cannot write " + path.string() + ".tmp"), std::string::npos)
      << refreshed.error().message;
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(err_.str(), "");
}

}  // namespace
}  // namespace nk::cli
