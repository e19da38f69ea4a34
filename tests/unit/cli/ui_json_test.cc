// The JSON the page reads: a DebugStatus, graph deltas, task runs and the
// node's telemetry, as the contract between cli/ui and ui/web names them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cli/ui/graph_delta.h"
#include "cli/ui/node_json.h"
#include "cli/ui/proto_json.h"
#include "cli/ui/run_collector.h"
#include "taskgraph/task_run_tracker.h"

namespace v1 = nodekeeper::v1;
using nlohmann::json;

namespace nk::ui {
namespace {

TEST(ProtoJson, ADebugStatusWithTheProtosFieldNamesAndNumbers) {
  v1::DebugStatus status;
  status.set_session_id(3);
  status.set_live(true);
  status.set_held(true);
  status.set_steps_left(2);
  status.set_parked_workers(4);
  status.set_not_queued(10);
  status.set_queued(1);
  status.set_finished(1ULL << 40);
  auto* fib = status.add_functions();
  fib->set_function("fib");
  fib->set_queued(1);
  status.add_ready(1099511627777ULL);
  status.add_blocked(5);
  status.add_blocked_functions("leaf");
  status.set_ready_total(1);
  status.set_stall("all 4 workers are held");
  status.set_gate_reported_ns(-1);

  json j = ProtoJson::toJson(status);
  EXPECT_EQ(j["held"], true);
  EXPECT_EQ(j["steps_left"], 2);
  EXPECT_EQ(j["parked_workers"], 4);
  EXPECT_EQ(j["not_queued"], 10);
  EXPECT_EQ(j["queued"], 1);
  EXPECT_EQ(j["running"], 0);  // zero values are there too
  EXPECT_TRUE(j["finished"].is_number_unsigned());  // not a string, as protobuf's JSON makes it
  EXPECT_EQ(j["finished"], 1ULL << 40);
  EXPECT_EQ(j["functions"], json::parse(R"([{"function":"fib","not_queued":0,"queued":1,"running":0,"finished":0}])"));
  EXPECT_EQ(j["ready"], json::array({1099511627777ULL}));
  EXPECT_EQ(j["blocked"], json::array({5}));
  EXPECT_EQ(j["blocked_functions"], json::array({"leaf"}));
  EXPECT_EQ(j["ready_total"], 1);
  EXPECT_EQ(j["blocked_total"], 0);
  EXPECT_EQ(j["frontends"], 0);
  EXPECT_EQ(j["stall"], "all 4 workers are held");
  EXPECT_EQ(j["gate_reported_ns"], -1);
}

TEST(ProtoJson, EnumsByNameAndNaNAsNull) {
  v1::Identity identity;
  identity.set_role(v1::ROLE_ADMIN);
  EXPECT_EQ(ProtoJson::toJson(identity)["role"], "ROLE_ADMIN");
  v1::PackageTelemetry package;
  package.set_temperature_c(std::numeric_limits<double>::quiet_NaN());
  package.set_power_w(12.5);
  json j = ProtoJson::toJson(package);
  EXPECT_TRUE(j["temperature_c"].is_null());
  EXPECT_EQ(j["power_w"], 12.5);
}

GraphEvent created(uint64_t task, uint64_t parent, std::string_view function) {
  GraphEvent e;
  e.type = GraphEvent::Type::kCreated;
  e.task = task;
  e.parent = parent;
  e.function = function;
  e.timestamp_ns = static_cast<int64_t>(task * 100);
  return e;
}
GraphEvent dependence(uint64_t from, uint64_t to, uint64_t address, uint8_t kind) {
  GraphEvent e;
  e.type = GraphEvent::Type::kDependence;
  e.from = from;
  e.task = to;
  e.address = address;
  e.kind = kind;
  return e;
}
GraphEvent started(uint64_t task, int32_t thread, int64_t ns) {
  GraphEvent e;
  e.type = GraphEvent::Type::kStarted;
  e.task = task;
  e.thread = thread;
  e.timestamp_ns = ns;
  return e;
}
GraphEvent finished(uint64_t task, int64_t ns) {
  GraphEvent e;
  e.type = GraphEvent::Type::kFinished;
  e.task = task;
  e.timestamp_ns = ns;
  return e;
}

void apply(TaskGraph& graph, GraphDelta& delta, const std::vector<GraphEvent>& events) {
  for (const auto& e : events) graph.apply(e);
  delta.note(graph, events);
}

TEST(GraphDelta, TheFirstEventHasEverythingThenOnlyWhatChanged) {
  TaskGraph graph;
  GraphDelta delta;
  apply(graph, delta, {created(1, 0, "fib"), created(2, 1, "fib"), dependence(1, 2, 0x7ffd10, 2)});
  auto first = delta.take(graph);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["tasks"].size(), 2u);
  EXPECT_EQ(first[0]["tasks"][0]["state"], "queued");  // created, nothing to wait for
  EXPECT_EQ(first[0]["tasks"][1], json::parse(R"({"id":2,"parent":1,"function":"fib","state":"not_queued",
      "thread":0,"created_ns":200,"start_ns":0,"end_ns":0})"));
  EXPECT_EQ(first[0]["edges"], json::parse(R"([{"from":1,"to":2,"deps":[{"address":"0x7ffd10","kind":"out"}]}])"));
  EXPECT_TRUE(delta.empty());

  // Task 1 runs and finishes; the pair gets a second address.
  apply(graph, delta, {started(1, 3, 1000), finished(1, 2000), dependence(1, 2, 0x10, 1)});
  auto second = delta.take(graph);
  ASSERT_EQ(second.size(), 1u);
  ASSERT_EQ(second[0]["tasks"].size(), 2u);  // 1 changed; 2 named by the dependence
  EXPECT_EQ(second[0]["tasks"][0]["id"], 1);
  EXPECT_EQ(second[0]["tasks"][0]["state"], "finished");
  EXPECT_EQ(second[0]["tasks"][0]["thread"], 3);
  EXPECT_EQ(second[0]["tasks"][0]["start_ns"], 1000);
  EXPECT_EQ(second[0]["tasks"][0]["end_ns"], 2000);
  EXPECT_EQ(second[0]["edges"], json::parse(R"([{"from":1,"to":2,"deps":[{"address":"0x7ffd10","kind":"out"},
      {"address":"0x10","kind":"in"}]}])"));

  // Nothing new: nothing to send.
  apply(graph, delta, {});
  EXPECT_TRUE(delta.empty());

  auto all = delta.everything(graph);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["tasks"].size(), 2u);
  EXPECT_EQ(all[0]["edges"].size(), 1u);
}

std::map<uint64_t, std::string> states(const std::vector<json>& events) {
  std::map<uint64_t, std::string> out;
  for (const auto& e : events)
    for (const auto& t : e["tasks"]) out[t["id"].get<uint64_t>()] = t["state"].get<std::string>();
  return out;
}

// As DebugStatus counts them: OMPT reports no queued event.
TEST(GraphDelta, ATaskIsQueuedOnceEveryPredecessorHasFinished) {
  TaskGraph graph;
  GraphDelta delta;
  apply(graph, delta, {created(1, 0, "a"), created(2, 0, "b"), created(3, 0, "c"), dependence(1, 3, 0x10, 1),
                       dependence(2, 3, 0x20, 1), dependence(9, 10, 0x30, 1)});
  EXPECT_EQ(states(delta.take(graph)), (std::map<uint64_t, std::string>{
                                           {1, "queued"}, {2, "queued"}, {3, "not_queued"},
                                           {9, "not_queued"}, {10, "not_queued"}}));  // 9, 10: placeholders
  apply(graph, delta, {started(1, 1, 500), finished(1, 600)});
  // 3 is sent again (its predecessor finished), still waiting for 2.
  EXPECT_EQ(states(delta.take(graph)), (std::map<uint64_t, std::string>{{1, "finished"}, {3, "not_queued"}}));
  apply(graph, delta, {started(2, 1, 700), finished(2, 800)});
  EXPECT_EQ(states(delta.take(graph)), (std::map<uint64_t, std::string>{{2, "finished"}, {3, "queued"}}));
  apply(graph, delta, {started(3, 2, 900)});
  EXPECT_EQ(states(delta.take(graph)), (std::map<uint64_t, std::string>{{3, "running"}}));
  EXPECT_EQ(states(delta.everything(graph))[3], "running");
}

TEST(GraphDelta, SplitsABigGraphIntoEventsOfAtMost5000Tasks) {
  TaskGraph graph;
  GraphDelta delta;
  std::vector<GraphEvent> events;
  for (uint64_t id = 1; id <= 12000; ++id) events.push_back(created(id, 0, "leaf"));
  events.push_back(dependence(1, 12000, 0x20, 3));
  apply(graph, delta, events);
  for (const auto& sent : {delta.take(graph), delta.everything(graph)}) {
    ASSERT_EQ(sent.size(), 3u);
    EXPECT_EQ(sent[0]["tasks"].size(), 5000u);
    EXPECT_EQ(sent[1]["tasks"].size(), 5000u);
    EXPECT_EQ(sent[2]["tasks"].size(), 2000u);
    EXPECT_TRUE(sent[0]["edges"].empty());
    EXPECT_EQ(sent[2]["edges"].size(), 1u);  // with the last tasks
    EXPECT_EQ(sent[2]["edges"][0]["deps"][0]["kind"], "inout");
  }
}

TEST(RunCollector, TaskRunsTaskwaitsAndBarriers) {
  RunCollector runs;
  TaskRunTracker tracker(runs);
  std::vector<GraphEvent> events = {created(1, 0, "fib"), started(1, 2, 1000), finished(1, 3000)};
  tracker.apply(events);
  v1::TaskEventBatch batch;
  auto sync = [&](int64_t ns, uint32_t thread, v1::TaskSync::Kind kind, uint64_t task, bool end) {
    auto* e = batch.add_events();
    e->set_timestamp_ns(ns);
    e->set_thread(thread);
    e->mutable_sync()->set_kind(kind);
    e->mutable_sync()->set_task_id(task);
    e->mutable_sync()->set_end(end);
  };
  sync(1500, 2, v1::TaskSync::KIND_TASKWAIT, 1, false);
  sync(2500, 2, v1::TaskSync::KIND_TASKWAIT, 1, true);
  sync(4000, 0, v1::TaskSync::KIND_BARRIER, 0, false);
  sync(5000, 0, v1::TaskSync::KIND_BARRIER, 0, true);
  runs.noteSync(batch);
  ASSERT_TRUE(runs.pending());
  json taken = runs.take();
  EXPECT_EQ(taken, json::parse(R"({"runs":[
      {"thread":2,"task":1,"kind":"task","start_ns":1000,"end_ns":3000},
      {"thread":2,"task":1,"kind":"taskwait","start_ns":1500,"end_ns":2500},
      {"thread":0,"task":0,"kind":"barrier","start_ns":4000,"end_ns":5000}]})"));
  EXPECT_FALSE(runs.pending());
  auto all = runs.everything(2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]["runs"].size(), 2u);
  EXPECT_EQ(all[1]["runs"].size(), 1u);
}

TEST(NodeJson, TelemetryInTheUnitsThePageShows) {
  v1::TelemetrySnapshot snapshot;
  snapshot.set_monotonic_ns(42);
  snapshot.set_node_power_w(80.5);
  auto* core = snapshot.add_cores();
  core->set_id(1);
  core->set_package(0);
  core->set_cur_khz(2400000);
  core->set_min_khz(800000);
  core->set_max_khz(3600000);
  core->set_temperature_c(std::nan(""));
  core->set_utilisation(0.5);
  auto* package = snapshot.add_packages();
  package->set_id(0);
  package->set_power_w(40);
  package->set_energy_j(1000);
  package->set_power_limit_w(95);
  package->set_power_limit_enabled(true);
  package->set_temperature_c(55);
  EXPECT_EQ(NodeJson::telemetry(snapshot), json::parse(R"({"monotonic_ns":42,"node_power_w":80.5,
      "cores":[{"id":1,"package":0,"cur_khz":2400000,"min_khz":800000,"max_khz":3600000,"temperature_c":null,
                "utilisation":0.5}],
      "packages":[{"id":0,"power_w":40.0,"energy_j":1000.0,"power_limit_w":95.0,"temperature_c":55.0}]})"));
}

TEST(NodeJson, AppsWithTheCoresTheirThreadsArePlacedOn) {
  v1::AppList list;
  auto* app = list.add_apps();
  app->set_pid(77);
  app->set_name("fib");
  app->set_power_budget_mw(50000);
  app->set_effective_budget_mw(45000);
  app->set_measured_power_mw(30500);
  app->set_thread_count(3);
  for (int core : {2, -1, 1, 2}) app->add_threads()->set_core(core);
  EXPECT_EQ(NodeJson::apps(list), json::parse(R"({"apps":[{"pid":77,"program":"fib","power_budget_w":50.0,
      "effective_budget_w":45.0,"power_w":30.5,"thread_count":3,"cpus":[1,2]}]})"));
}

}  // namespace
}  // namespace nk::ui
