#include "metrics/node_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

namespace nk {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

NodeMetrics::Snapshot twoPackageNode() {
  auto t = std::make_shared<TelemetrySample>();
  for (uint32_t i = 0; i < 4; ++i) {
    CoreSample c;
    c.id = i;
    c.package = i / 2;
    c.cur_khz = 2'400'000;
    c.min_khz = 1'200'000;
    c.max_khz = 2'600'000;
    c.temperature_c = 40.5 + i;
    t->cores.push_back(c);
  }
  t->cores[3].temperature_c = kUnknown;
  for (uint32_t p = 0; p < 2; ++p) {
    PackageSample s;
    s.id = p;
    s.power_w = 30.25 + p;
    s.energy_j = 1234.5 + p;
    s.power_limit_w = 95;
    s.power_limit_enabled = p == 0;
    t->packages.push_back(s);
  }
  t->node_power_w = 61.5;
  t->node_energy_j = 2470;
  NodeMetrics::Snapshot s;
  s.telemetry = t;
  s.version = "1.2.3";
  s.node_name = "n1";
  s.start_time_seconds = 1700000000.5;
  return s;
}

AppRecord app(pid_t pid, std::string name, uint64_t budget_mw) {
  AppRecord a;
  a.pid = pid;
  a.name = std::move(name);
  a.power_budget_mw = budget_mw;
  a.measured_power_mw = 41'500;
  a.effective_budget_mw = budget_mw / 2;
  a.threads.resize(3);
  a.decision.thread_count = 2;
  return a;
}

TEST(NodeMetricsTest, CoresInHertzAndCelsiusWithCpuAndPackage) {
  const std::string text = NodeMetrics::render(twoPackageNode());
  EXPECT_THAT(text, HasSubstr("# TYPE nodekeeper_cpu_scaling_frequency_hertz gauge\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_cpu_scaling_frequency_hertz{cpu=\"2\",package=\"1\"} 2400000000\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_cpu_scaling_frequency_min_hertz{cpu=\"0\",package=\"0\"} 1200000000\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_cpu_scaling_frequency_max_hertz{cpu=\"0\",package=\"0\"} 2600000000\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_cpu_temperature_celsius{cpu=\"1\",package=\"0\"} 41.5\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_cpu_temperature_celsius{cpu=\"3\",package=\"1\"} NaN\n"));
}

TEST(NodeMetricsTest, PackagesPowerEnergyAndCaps) {
  const std::string text = NodeMetrics::render(twoPackageNode());
  EXPECT_THAT(text, HasSubstr("nodekeeper_package_power_watts{package=\"1\"} 31.25\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE nodekeeper_package_energy_joules_total counter\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_package_energy_joules_total{package=\"0\"} 1234.5\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_package_power_limit_watts{package=\"0\"} 95\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_package_power_limit_enabled{package=\"0\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_package_power_limit_enabled{package=\"1\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_node_power_watts 61.5\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_node_energy_joules_total 2470\n"));
}

TEST(NodeMetricsTest, NoTelemetryYetLeavesTheNodeOut) {
  NodeMetrics::Snapshot s = twoPackageNode();
  s.telemetry = nullptr;
  const std::string text = NodeMetrics::render(s);
  EXPECT_THAT(text, Not(HasSubstr("nodekeeper_package_power_watts")));
  EXPECT_THAT(text, HasSubstr("nodekeeper_build_info{version=\"1.2.3\",node=\"n1\",profile=\"\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("process_start_time_seconds 1700000000.5\n"));
}

TEST(NodeMetricsTest, AppsByPidAndProgramWithoutABudgetWhenNone) {
  NodeMetrics::Snapshot s = twoPackageNode();
  s.apps = {app(101, "lulesh", 60'000), app(102, "x\"y", 0)};
  const std::string text = NodeMetrics::render(s);
  EXPECT_THAT(text, HasSubstr("nodekeeper_apps 2\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_power_watts{pid=\"101\",program=\"lulesh\"} 41.5\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_power_watts{pid=\"102\",program=\"x\\\"y\"} 41.5\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_power_budget_watts{pid=\"101\",program=\"lulesh\"} 60\n"));
  EXPECT_THAT(text, Not(HasSubstr("nodekeeper_app_power_budget_watts{pid=\"102\"")));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_effective_power_budget_watts{pid=\"101\",program=\"lulesh\"} 30\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_threads{pid=\"101\",program=\"lulesh\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_decided_threads{pid=\"101\",program=\"lulesh\"} 2\n"));
}

TEST(NodeMetricsTest, AppsEnergyAsCountersAndTheirJobAsInfo) {
  NodeMetrics::Snapshot s = twoPackageNode();
  s.apps = {app(101, "lulesh", 60'000), app(102, "solo", 0)};
  s.apps[0].energy_j = 812.25;
  s.apps[0].job_id = "4242.0";
  const std::string text = NodeMetrics::render(s);
  EXPECT_THAT(text, HasSubstr("# TYPE nodekeeper_app_energy_joules_total counter\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_energy_joules_total{pid=\"101\",program=\"lulesh\"} 812.25\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_energy_joules_total{pid=\"102\",program=\"solo\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_info{pid=\"101\",program=\"lulesh\",job_id=\"4242.0\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_app_info{pid=\"102\",program=\"solo\",job_id=\"\"} 1\n"));
}

TEST(NodeMetricsTest, AppsAndProgramNamesAreBounded) {
  NodeMetrics::Snapshot s = twoPackageNode();
  for (size_t i = 0; i < NodeMetrics::kMaxApps + 10; ++i)
    s.apps.push_back(app(static_cast<pid_t>(1000 + i), std::string(200, 'p'), 0));
  const std::string text = NodeMetrics::render(s);
  EXPECT_THAT(text, HasSubstr("nodekeeper_apps " + std::to_string(NodeMetrics::kMaxApps + 10) + "\n"));
  size_t threads = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("nodekeeper_app_threads{")) ++threads;
  EXPECT_EQ(threads, NodeMetrics::kMaxApps);
  EXPECT_THAT(text, HasSubstr("program=\"" + std::string(NodeMetrics::kMaxProgramBytes, 'p') + "\"}"));
  EXPECT_THAT(text, Not(HasSubstr(std::string(NodeMetrics::kMaxProgramBytes + 1, 'p'))));
}

TEST(NodeMetricsTest, TaskSymptomAndFaultCounters) {
  NodeMetrics::Snapshot s = twoPackageNode();
  s.tasks = {.sessions_opened = 3, .sessions_live = 1, .batches_received = 70, .batches_unrecorded = 5,
             .batches_refused = 2, .events = 9000};
  s.symptoms = {{"response_timeout", 4}, {"mpi_error", 0}};
  s.symptoms_evicted = 1;
  s.faults = {{"process_hang", 2}};
  const std::string text = NodeMetrics::render(s);
  EXPECT_THAT(text, HasSubstr("nodekeeper_task_sessions_opened_total 3\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_task_sessions_live 1\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_task_batches_received_total 70\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_task_batches_unrecorded_total 5\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_task_batches_refused_total 2\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_task_events_total 9000\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_symptoms_total{kind=\"response_timeout\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_symptoms_total{kind=\"mpi_error\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_symptoms_evicted_total 1\n"));
  EXPECT_THAT(text, HasSubstr("nodekeeper_faults_total{kind=\"process_hang\"} 2\n"));
}

// Every counter family ends in _total, every family is described once, and
// each sample belongs to the family described last.
TEST(NodeMetricsTest, EveryFamilyOnceWithHelpTypeAndItsOwnSamples) {
  NodeMetrics::Snapshot s = twoPackageNode();
  s.apps = {app(101, "a", 1)};
  s.symptoms = {{"mpi_error", 1}};
  s.faults = {{"node_down", 1}};
  RpcLatencies rpc;
  rpc.observe("/nodekeeper.v1.Node/GetTelemetry", 0.01);
  s.rpc = &rpc;
  std::istringstream lines(NodeMetrics::render(s));
  std::set<std::string> families;
  std::string family, type;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# HELP ")) {
      family = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(families.insert(family).second) << family << " twice";
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      type = line.substr(line.rfind(' ') + 1);
      if (type == "counter") {
        EXPECT_TRUE(family.ends_with("_total")) << family;
      }
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    if (type == "histogram") {
      EXPECT_TRUE(name == family + "_bucket" || name == family + "_sum" || name == family + "_count") << line;
    } else {
      EXPECT_EQ(name, family) << line;
    }
  }
  EXPECT_GT(families.size(), 25u);
}

}  // namespace
}  // namespace nk
