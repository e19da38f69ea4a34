#include "taskgraph/graph_exporter.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace nk {
namespace {

using T = GraphEvent::Type;

// 1 -> 2 -> 3 on x, 1 -> 4 on y; 1..3 ran, 4 never started.
TaskGraph smallGraph() {
  TaskGraph g;
  auto ev = [&](T type, uint64_t task, int64_t ts, int32_t thread = -1) {
    GraphEvent e;
    e.type = type;
    e.task = task;
    e.timestamp_ns = ts;
    e.thread = thread;
    g.apply(e);
  };
  for (uint64_t id : {1, 2, 3, 4}) {
    GraphEvent e;
    e.type = T::kCreated;
    e.task = id;
    e.function = id == 4 ? "never \"run\"" : (id % 2 ? "odd" : "even");
    e.timestamp_ns = 1;
    g.apply(e);
  }
  for (auto [from, to, address] : {std::tuple{1, 2, 0x10}, {2, 3, 0x10}, {1, 4, 0x20}}) {
    GraphEvent e;
    e.type = T::kDependence;
    e.from = from;
    e.task = to;
    e.address = address;
    g.apply(e);
  }
  ev(T::kStarted, 1, 1000, 0);
  ev(T::kFinished, 1, 2500, 0);
  ev(T::kStarted, 2, 3000, 1);
  ev(T::kFinished, 2, 4000, 1);
  ev(T::kStarted, 3, 4200, 0);
  ev(T::kFailed, 3, 5000, 0);
  return g;
}

TEST(GraphExporter, PerfettoJsonParsesWithOneSlicePerRunAndAFlowPerEdgeBetweenRuns) {
  std::ostringstream out;
  GraphExporter::perfettoJson(smallGraph(), out);
  nlohmann::json trace = nlohmann::json::parse(out.str());  // throws on bad JSON
  int slices = 0, starts = 0, ends = 0;
  std::set<uint64_t> tasks;
  for (const auto& e : trace["traceEvents"]) {
    std::string ph = e["ph"];
    if (ph == "X") {
      ++slices;
      tasks.insert(e["args"]["task"].get<uint64_t>());
      if (e["args"]["task"] == 1) {
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.0);   // 1000 ns
        EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1.5);  // 1500 ns
        EXPECT_EQ(e["tid"], 0);
        EXPECT_EQ(e["name"], "odd");
      }
    }
    starts += ph == "s";
    ends += ph == "f";
  }
  EXPECT_EQ(slices, 3);
  EXPECT_EQ(tasks, (std::set<uint64_t>{1, 2, 3}));
  EXPECT_EQ(starts, 2);  // 1->2 and 2->3; 4 never ran
  EXPECT_EQ(ends, 2);
}

TEST(GraphExporter, DotHasEveryTaskAndEdgeWithItsAddress) {
  std::ostringstream out;
  GraphExporter::dot(smallGraph(), out);
  std::string dot = out.str();
  EXPECT_EQ(dot.rfind("digraph tasks {", 0), 0u);
  for (const char* node : {"t1 [", "t2 [", "t3 [", "t4 ["}) EXPECT_NE(dot.find(node), std::string::npos) << node;
  EXPECT_NE(dot.find("t1 -> t2 [label=\"0x10\"]"), std::string::npos);
  EXPECT_NE(dot.find("t2 -> t3 [label=\"0x10\"]"), std::string::npos);
  EXPECT_NE(dot.find("t1 -> t4 [label=\"0x20\"]"), std::string::npos);
  EXPECT_NE(dot.find("never \\\"run\\\""), std::string::npos);  // quotes escaped
  EXPECT_NE(dot.find("dashed"), std::string::npos);              // the failed task
  // Name and id on two lines, with DOT's own escape.
  EXPECT_NE(dot.find("t1 [label=\"odd\\n#1\""), std::string::npos) << dot;
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
}

// A pair sharing addresses is one arrow listing them (a few, then a
// count), and one flow in Perfetto.
TEST(GraphExporter, APairSharingAddressesIsOneArrowAndOneFlow) {
  TaskGraph g;
  for (uint64_t id : {1, 2, 3}) {
    GraphEvent e;
    e.type = T::kCreated;
    e.task = id;
    g.apply(e);
    e.type = T::kStarted;
    e.timestamp_ns = static_cast<int64_t>(id) * 100;
    e.thread = 0;
    g.apply(e);
    e.type = T::kFinished;
    e.timestamp_ns += 50;
    g.apply(e);
  }
  auto dependence = [&](uint64_t from, uint64_t to, uint64_t address) {
    GraphEvent e;
    e.type = T::kDependence;
    e.from = from;
    e.task = to;
    e.address = address;
    e.kind = 3;
    g.apply(e);
  };
  for (uint64_t a : {0x10, 0x20, 0x30}) dependence(1, 2, a);
  for (uint64_t a = 0x100; a < 0x107; ++a) dependence(2, 3, a);
  std::ostringstream dot_out;
  GraphExporter::dot(g, dot_out);
  const std::string dot = dot_out.str();
  EXPECT_NE(dot.find("t1 -> t2 [label=\"0x10\\n0x20\\n0x30\", penwidth=2];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("t2 -> t3 [label=\"0x100\\n0x101\\n0x102\\n0x103\\n+3 more\", penwidth=2];"),
            std::string::npos)
      << dot;
  size_t arrows = 0;
  for (size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 2)) ++arrows;
  EXPECT_EQ(arrows, 2u);
  std::ostringstream json_out;
  GraphExporter::perfettoJson(g, json_out);
  int starts = 0;
  const nlohmann::json trace = nlohmann::json::parse(json_out.str());
  for (const auto& e : trace["traceEvents"]) starts += e["ph"] == "s";
  EXPECT_EQ(starts, 2);
}

}  // namespace
}  // namespace nk
