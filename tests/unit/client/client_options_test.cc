#include "client_options.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>

namespace nk::client {
namespace {

std::map<std::string, std::string> g_env;
const char* fakeGetenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(ClientOptions, Defaults) {
  g_env.clear();
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(options.socket_path, "/run/nodekeeper/nodekeeperd.sock");
  EXPECT_EQ(options.power_budget_mw, 0u);
  EXPECT_FALSE(options.debug);
  EXPECT_TRUE(options.forced_thread_counts.empty());
  EXPECT_TRUE(options.warnings.empty());
}

TEST(ClientOptions, ReadsTheEnvironment) {
  g_env = {{"NODEKEEPER_SOCKET", "/tmp/nk.sock"},
           {"NODEKEEPER_POWER_BUDGET_MW", "15000"},
           {"NK_DEBUG", "1"},
           {"NK_TEST_FORCE_THREADS", "3,2"}};
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(options.socket_path, "/tmp/nk.sock");
  EXPECT_EQ(options.power_budget_mw, 15000u);
  EXPECT_TRUE(options.debug);
  EXPECT_EQ(options.forced_thread_counts, (std::vector<uint32_t>{3, 2}));
  EXPECT_TRUE(options.warnings.empty());
}

TEST(ClientOptions, BadBudgetIsOneWarningAndIgnored) {
  g_env = {{"NODEKEEPER_POWER_BUDGET_MW", "12W"}};
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(options.power_budget_mw, 0u);
  ASSERT_EQ(options.warnings.size(), 1u);
  EXPECT_EQ(options.warnings[0].rfind("nodekeeper: ignoring NODEKEEPER_POWER_BUDGET_MW=\"12W\": ", 0), 0u);
}

TEST(ClientOptions, TheTaskClockIsTheCounterUnlessMonotonicIsAsked) {
  g_env.clear();
  EXPECT_TRUE(ClientOptions::fromEnvironment(&fakeGetenv).task_clock_counter);
  g_env = {{"NODEKEEPER_TASK_CLOCK", "monotonic"}};
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_FALSE(options.task_clock_counter);
  EXPECT_TRUE(options.warnings.empty());
  g_env = {{"NODEKEEPER_TASK_CLOCK", "rdtsc"}};
  options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_TRUE(options.task_clock_counter);
  ASSERT_EQ(options.warnings.size(), 1u);
  EXPECT_EQ(options.warnings[0], "nodekeeper: ignoring NODEKEEPER_TASK_CLOCK=\"rdtsc\": expected auto or monotonic");
}

TEST(ClientOptions, BadForcedCountsAreIgnored) {
  g_env = {{"NK_TEST_FORCE_THREADS", "3,x"}};
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_TRUE(options.forced_thread_counts.empty());
  EXPECT_EQ(options.warnings.size(), 1u);
}

}  // namespace
}  // namespace nk::client

namespace nk::client {
namespace {

TEST(ClientOptions, TaskEventsAreOffUnlessAskedFor) {
  g_env.clear();
  auto unset = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(unset.task_events, TaskEventMode::kOff);
  EXPECT_FALSE(unset.task_events_explicit);
  g_env = {{"NODEKEEPER_TASKS", "lossless"}, {"NODEKEEPER_TASK_BUFFER", "4096"}};
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(options.task_events, TaskEventMode::kLossless);
  EXPECT_TRUE(options.task_events_explicit);
  EXPECT_EQ(options.task_buffer_events, 4096u);
  g_env = {{"NODEKEEPER_TASKS", "lossy"}};
  auto lossy = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(lossy.task_events, TaskEventMode::kLossy);
  EXPECT_TRUE(lossy.task_events_explicit);
}

// Unset and off both leave OpenMP capture off; only an explicit off also
// keeps the C API and AYU_event from starting it.
TEST(ClientOptions, ExplicitOffIsToldApartFromUnset) {
  for (const char* off : {"off", "0"}) {
    g_env = {{"NODEKEEPER_TASKS", off}};
    auto options = ClientOptions::fromEnvironment(&fakeGetenv);
    EXPECT_EQ(options.task_events, TaskEventMode::kOff) << off;
    EXPECT_TRUE(options.task_events_explicit) << off;
    EXPECT_TRUE(options.warnings.empty()) << off;
  }
  g_env = {{"NODEKEEPER_TASKS", ""}};
  EXPECT_FALSE(ClientOptions::fromEnvironment(&fakeGetenv).task_events_explicit);
}

TEST(ClientOptions, BadTaskSettingsAreOneWarningEachAndIgnored) {
  g_env = {{"NODEKEEPER_TASKS", "maybe"}, {"NODEKEEPER_TASK_BUFFER", "12"}};
  auto options = ClientOptions::fromEnvironment(&fakeGetenv);
  EXPECT_EQ(options.task_events, TaskEventMode::kOff);
  EXPECT_FALSE(options.task_events_explicit);  // an ignored value is as if unset
  EXPECT_EQ(options.task_buffer_events, 0u);  // the default's, by CPUs
  ASSERT_EQ(options.warnings.size(), 2u);
  EXPECT_NE(options.warnings[0].find("NODEKEEPER_TASKS=\"maybe\""), std::string::npos);
  EXPECT_NE(options.warnings[1].find("NODEKEEPER_TASK_BUFFER=\"12\""), std::string::npos);
}

TEST(ClientOptions, TaskStallLimitIsSecondsAndDefaultsToTen) {
  g_env.clear();
  EXPECT_EQ(ClientOptions::fromEnvironment(&fakeGetenv).task_stall_limit, std::chrono::seconds(10));
  for (auto [text, ms] : {std::pair{"30", 30000}, {"2.5", 2500}, {"0.1", 100}, {"86400", 86400000}, {"1.", 1000}}) {
    g_env = {{"NODEKEEPER_TASKS_STALL_S", text}};
    auto options = ClientOptions::fromEnvironment(&fakeGetenv);
    EXPECT_EQ(options.task_stall_limit, std::chrono::milliseconds(ms)) << text;
    EXPECT_TRUE(options.warnings.empty()) << text;
  }
}

TEST(ClientOptions, BadTaskStallLimitIsOneWarningAndIgnored) {
  for (const char* bad : {"0", "0.05", "86401", "-1", "ten", "5s", ".", "1e3", "99999999999"}) {
    g_env = {{"NODEKEEPER_TASKS_STALL_S", bad}};
    auto options = ClientOptions::fromEnvironment(&fakeGetenv);
    EXPECT_EQ(options.task_stall_limit, std::chrono::seconds(10)) << bad;
    ASSERT_EQ(options.warnings.size(), 1u) << bad;
    EXPECT_NE(options.warnings[0].find("NODEKEEPER_TASKS_STALL_S=\"" + std::string(bad) + "\""), std::string::npos)
        << options.warnings[0];
  }
}

TEST(ClientOptions, TracingOnlyMeansTaskEventsWithoutABudget) {
  g_env = {{"NODEKEEPER_TASKS", "lossless"}};
  EXPECT_TRUE(ClientOptions::fromEnvironment(&fakeGetenv).tracingOnly());
  g_env = {{"NODEKEEPER_TASKS", "lossy"}, {"NODEKEEPER_POWER_BUDGET_MW", "40000"}};
  EXPECT_FALSE(ClientOptions::fromEnvironment(&fakeGetenv).tracingOnly()) << "a budget asks for management";
  g_env = {{"NODEKEEPER_TASKS", "off"}};
  EXPECT_FALSE(ClientOptions::fromEnvironment(&fakeGetenv).tracingOnly()) << "the tool loaded for energy management";
  g_env.clear();
  EXPECT_FALSE(ClientOptions::fromEnvironment(&fakeGetenv).tracingOnly());
}

}  // namespace
TEST(ClientOptions, TaskBuffersShareAFixedSizeOverTheCpusWithAFloor) {
  ClientOptions options;
  EXPECT_EQ(options.taskBufferEvents(1, 0), 512u * 1024);
  EXPECT_EQ(options.taskBufferEvents(2, 0), 256u * 1024);
  EXPECT_EQ(options.taskBufferEvents(2, 1), 256u * 1024);
  EXPECT_EQ(options.taskBufferEvents(3, 0), 128u * 1024);  // a power of two, rounded down
  EXPECT_EQ(options.taskBufferEvents(8, 0), 64u * 1024);
  EXPECT_EQ(options.taskBufferEvents(128, 0), 64u * 1024);  // the floor: no less than before
  EXPECT_EQ(options.taskBufferEvents(0, 0), 512u * 1024);
  // More threads than CPUs: later ones share less, so the total stays bounded.
  EXPECT_EQ(options.taskBufferEvents(2, 2), 128u * 1024);
  EXPECT_EQ(options.taskBufferEvents(2, 63), 64u * 1024);
  size_t total = 0;
  for (size_t before = 0; before < 64; ++before) total += options.taskBufferEvents(2, before);
  EXPECT_LE(total, 64u * 64 * 1024 + 2 * ClientOptions::kSharedTaskBufferEvents);
  options.task_buffer_events = 4096;  // NODEKEEPER_TASK_BUFFER says
  EXPECT_EQ(options.taskBufferEvents(2, 0), 4096u);
  EXPECT_EQ(options.taskBufferEvents(2, 100), 4096u);
}

}  // namespace nk::client
