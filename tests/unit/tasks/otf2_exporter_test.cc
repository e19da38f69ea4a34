#include "taskgraph/otf2_exporter.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace nk {
namespace {

namespace fs = std::filesystem;
using T = GraphEvent::Type;

// Thread 0: 1 (outer) runs 1000-5000, and 2 (inner) runs inside it at its
//   taskwait, 2000-3000.
// Thread 1: 3 (no function name; failed) 1500-2500, then 5 (inner) from
//   4000, still running; the graph's last timestamp is 4's creation, 6000.
// Thread 2: 7 and 8 (lossy) overlap without nesting, 1200-3200 and
//   2200-4200, as an untied task that moved threads leaves them.
// 4 never starts. Dependences 3 -> 2, 1 -> 4, 2 -> 5, 3 -> 5.
TaskGraph nestedGraph() {
  TaskGraph g;
  struct Created {
    uint64_t id, parent;
    const char* function;
    int64_t at;
  };
  for (const Created& c : {Created{1, 0, "outer", 10}, Created{2, 1, "inner", 20}, Created{3, 1, "", 30},
                           Created{4, 1, "never", 6000}, Created{5, 1, "inner", 40}, Created{7, 0, "lossy", 50},
                           Created{8, 0, "lossy", 60}}) {
    GraphEvent e;
    e.type = T::kCreated;
    e.task = c.id;
    e.parent = c.parent;
    e.function = c.function;
    e.timestamp_ns = c.at;
    g.apply(e);
  }
  for (auto [from, to, address, kind] :
       {std::tuple{3, 2, 0x10, 1}, {1, 4, 0x20, 1}, {2, 5, 0x30, 2}, {3, 5, 0x40, 3}}) {
    GraphEvent e;
    e.type = T::kDependence;
    e.from = from;
    e.task = to;
    e.address = address;
    e.kind = static_cast<uint8_t>(kind);
    g.apply(e);
  }
  auto ev = [&](T type, uint64_t task, int64_t ts, int32_t thread = -1) {
    GraphEvent e;
    e.type = type;
    e.task = task;
    e.timestamp_ns = ts;
    e.thread = thread;
    g.apply(e);
  };
  ev(T::kStarted, 1, 1000, 0);
  ev(T::kStarted, 7, 1200, 2);
  ev(T::kStarted, 3, 1500, 1);
  ev(T::kStarted, 2, 2000, 0);
  ev(T::kStarted, 8, 2200, 2);
  ev(T::kFailed, 3, 2500, 1);
  ev(T::kFinished, 2, 3000, 0);
  ev(T::kFinished, 7, 3200, 2);
  ev(T::kStarted, 5, 4000, 1);
  ev(T::kFinished, 8, 4200, 2);
  ev(T::kFinished, 1, 5000, 0);
  return g;
}

struct Command {
  int status = -1;
  std::string output;
};

Command run(const std::string& command) {
  Command c;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return c;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) c.output.append(buf, n);
  c.status = pclose(pipe);
  return c;
}

std::string quotedPath(const fs::path& p) { return "'" + p.string() + "'"; }

// One event line of otf2-print, with its ADDITIONAL ATTRIBUTES line if any.
struct Event {
  std::string kind;
  uint64_t location = 0, time = 0;
  std::string rest, attributes;
};

std::vector<Event> parseEvents(const std::string& output) {
  std::vector<Event> events;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("ADDITIONAL ATTRIBUTES:") != std::string::npos && !events.empty()) {
      events.back().attributes = line;
      continue;
    }
    std::istringstream fields(line);
    Event e;
    if (!(fields >> e.kind >> e.location >> e.time)) continue;
    if (e.kind != "ENTER" && e.kind != "LEAVE" && e.kind.rfind("PARAMETER", 0) != 0) continue;
    std::getline(fields, e.rest);
    events.push_back(e);
  }
  return events;
}

std::string regionOf(const Event& e) {
  std::smatch m;
  return std::regex_search(e.rest, m, std::regex("Region: \"([^\"]*)\"")) ? m[1].str() : "";
}

bool hasAttribute(const Event& e, const std::string& name, const std::string& value) {
  return std::regex_search(e.attributes, std::regex("\\(\"" + name + "\" <[0-9]+>; [A-Z0-9]+; " + value + "\\)"));
}

class Otf2ExporterTest : public ::testing::Test {
 protected:
  // A test makes the directory read-only; TempDir could not empty it then.
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_.path(), fs::perms::owner_all, ec);
  }

  Command print(const std::string& name) { return run("otf2-print " + quotedPath(dir_ / (name + ".otf2"))); }

  test::TempDir dir_{"otf2-test"};
};

TEST_F(Otf2ExporterTest, OtfPrintReadsNestedRunsRegionsAndDependences) {
  TaskGraph g = nestedGraph();
  std::string error;
  ASSERT_TRUE(Otf2Exporter::write(g, dir_.path(), "trace", &error)) << error;
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "trace.otf2"));
  EXPECT_TRUE(fs::is_directory(dir_ / "trace"));

  Command printed = print("trace");
  ASSERT_TRUE(WIFEXITED(printed.status) && WEXITSTATUS(printed.status) == 0) << printed.output;
  std::vector<Event> events = parseEvents(printed.output);
  int enters = 0, leaves = 0, parameters = 0;
  for (const Event& e : events) {
    enters += e.kind == "ENTER";
    leaves += e.kind == "LEAVE";
    parameters += e.kind == "PARAMETER_UINT64";
  }
  // 1, 2, 3, 5, 7 and 8 ran; 4 did not.
  EXPECT_EQ(enters, 6) << printed.output;
  EXPECT_EQ(leaves, 6) << printed.output;
  EXPECT_EQ(enters + leaves, 2 * 6);
  // 3 -> 2, 2 -> 5, 3 -> 5; 1 -> 4 has no run to sit in.
  EXPECT_EQ(parameters, 3) << printed.output;
  for (const char* region : {"\"outer\"", "\"inner\"", "\"task\"", "\"lossy\""}) {
    EXPECT_NE(printed.output.find(std::string("Region: ") + region), std::string::npos) << region;
  }
  EXPECT_EQ(printed.output.find("\"never\""), std::string::npos) << "a task that never ran has no events";

  // Per location, in file order; times relative to the first start (1000).
  std::map<uint64_t, std::vector<std::tuple<std::string, uint64_t, std::string>>> by_location;
  for (const Event& e : events) {
    if (e.kind == "ENTER" || e.kind == "LEAVE") by_location[e.location].emplace_back(e.kind, e.time, regionOf(e));
  }
  using Seq = std::vector<std::tuple<std::string, uint64_t, std::string>>;
  EXPECT_EQ(by_location[0], (Seq{{"ENTER", 0, "outer"}, {"ENTER", 1000, "inner"}, {"LEAVE", 2000, "inner"},
                                 {"LEAVE", 4000, "outer"}}));
  // 5 is still running: it leaves at the graph's last timestamp (6000).
  EXPECT_EQ(by_location[1], (Seq{{"ENTER", 500, "task"}, {"LEAVE", 1500, "task"}, {"ENTER", 3000, "inner"},
                                 {"LEAVE", 5000, "inner"}}));
  // 8 is cut at the end of 7, which encloses its start.
  EXPECT_EQ(by_location[2], (Seq{{"ENTER", 200, "lossy"}, {"ENTER", 1200, "lossy"}, {"LEAVE", 2200, "lossy"},
                                 {"LEAVE", 2200, "lossy"}}));
  EXPECT_EQ(by_location.size(), 3u);

  // Attributes: ids on Enters, the failed and the unfinished on Leaves,
  // the predecessors with their addresses after the successors' Enters.
  std::vector<std::tuple<uint64_t, uint64_t, std::string, std::string>> dependences;
  for (const Event& e : events) {
    if (e.kind == "ENTER" && e.location == 0 && e.time == 1000) {
      EXPECT_TRUE(hasAttribute(e, "task", "2")) << e.attributes;
      EXPECT_TRUE(hasAttribute(e, "parent", "1")) << e.attributes;
    }
    if (e.kind == "ENTER" && e.location == 0 && e.time == 0) {
      EXPECT_TRUE(hasAttribute(e, "task", "1")) << e.attributes;
      EXPECT_EQ(e.attributes.find("\"parent\""), std::string::npos) << "1 has no parent";
    }
    if (e.kind == "LEAVE" && e.location == 1) {
      EXPECT_EQ(hasAttribute(e, "failed", "1"), e.time == 1500) << e.attributes;
      EXPECT_EQ(hasAttribute(e, "unfinished", "1"), e.time == 5000) << e.attributes;
    }
    if (e.kind == "PARAMETER_UINT64") {
      std::smatch m;
      ASSERT_TRUE(std::regex_search(e.rest, m, std::regex("\"dependence on\" <[0-9]+>, Value: ([0-9]+)"))) << e.rest;
      std::string address = "?", kind = "?";
      for (const char* a : {"16", "48", "64"}) {
        if (hasAttribute(e, "address", a)) address = a;
      }
      for (const char* k : {"1", "2", "3"}) {
        if (hasAttribute(e, "kind", k)) kind = k;
      }
      dependences.emplace_back(e.location, e.time, m[1].str() + "@" + address, kind);
    }
  }
  std::sort(dependences.begin(), dependences.end());
  EXPECT_EQ(dependences, (std::vector<std::tuple<uint64_t, uint64_t, std::string, std::string>>{
                             {0, 1000, "3@16", "1"}, {1, 3000, "2@48", "2"}, {1, 3000, "3@64", "3"}}));

  // 1 ns ticks, and a trace length that covers the last Leave.
  Command defs = run("otf2-print -G " + quotedPath(dir_ / "trace.otf2"));
  ASSERT_TRUE(WIFEXITED(defs.status) && WEXITSTATUS(defs.status) == 0) << defs.output;
  EXPECT_TRUE(std::regex_search(defs.output, std::regex("Ticks per Seconds: 1000000000"))) << defs.output;
  EXPECT_TRUE(std::regex_search(defs.output, std::regex("Length: 5000\\b"))) << defs.output;
}

TEST_F(Otf2ExporterTest, RefusesAnExistingArchiveAndLeavesItIntact) {
  TaskGraph g = nestedGraph();
  std::string error;
  ASSERT_TRUE(Otf2Exporter::write(g, dir_.path(), "trace", &error)) << error;
  std::string before = print("trace").output;

  TaskGraph other;
  EXPECT_FALSE(Otf2Exporter::write(other, dir_.path(), "trace", &error));
  EXPECT_NE(error.find((dir_ / "trace.otf2").string()), std::string::npos) << error;
  EXPECT_NE(error.find("already exists"), std::string::npos) << error;
  EXPECT_EQ(print("trace").output, before);

  // A stray event folder alone is enough to refuse: it would be mixed in.
  fs::create_directory(dir_ / "stray");
  error.clear();
  EXPECT_FALSE(Otf2Exporter::write(g, dir_.path(), "stray", &error));
  EXPECT_NE(error.find((dir_ / "stray").string() + " already exists"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir_ / "stray.otf2"));
}

TEST_F(Otf2ExporterTest, MissingOrNonDirectoryPathIsNamedInTheError) {
  TaskGraph g = nestedGraph();
  std::string error;
  fs::path missing = dir_ / "missing" / "deeper";
  EXPECT_FALSE(Otf2Exporter::write(g, missing, "trace", &error));
  EXPECT_NE(error.find(missing.string()), std::string::npos) << error;
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir_ / "missing")) << "nothing created on the way";

  std::ofstream(dir_ / "file") << "not a directory";
  error.clear();
  EXPECT_FALSE(Otf2Exporter::write(g, dir_ / "file", "trace", &error));
  EXPECT_NE(error.find((dir_ / "file").string() + " is not a directory"), std::string::npos) << error;
  error.clear();
  fs::path below_file = dir_ / "file" / "x";
  EXPECT_FALSE(Otf2Exporter::write(g, below_file, "trace", &error));
  EXPECT_NE(error.find(below_file.string()), std::string::npos) << error;

  error.clear();
  EXPECT_FALSE(Otf2Exporter::write(g, dir_.path(), "a/b", &error));
  EXPECT_NE(error.find("a/b"), std::string::npos) << error;
  EXPECT_FALSE(Otf2Exporter::write(g, dir_.path(), "", nullptr));
}

TEST_F(Otf2ExporterTest, UnwritableDirectoryIsNamedInTheError) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  fs::path locked = dir_ / "locked";
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  std::string error;
  EXPECT_FALSE(Otf2Exporter::write(nestedGraph(), locked, "trace", &error));
  EXPECT_NE(error.find(locked.string() + " is not writable"), std::string::npos) << error;
  fs::permissions(locked, fs::perms::owner_all);
}

// OTF2's readers reject an archive without locations; a clear error
// rather than an archive nothing can open.
TEST_F(Otf2ExporterTest, GraphWithoutRunsIsRefusedAndWritesNothing) {
  TaskGraph g;
  GraphEvent e;
  e.type = T::kCreated;
  e.task = 1;
  e.function = "queued";
  g.apply(e);
  std::string error;
  EXPECT_FALSE(Otf2Exporter::write(g, dir_.path(), "empty", &error));
  EXPECT_NE(error.find((dir_ / "empty.otf2").string()), std::string::npos) << error;
  EXPECT_NE(error.find("no task"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_empty(dir_.path()));
}

}  // namespace
}  // namespace nk
