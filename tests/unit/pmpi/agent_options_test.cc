#include "agent_options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace nk::pmpi {
namespace {

std::map<std::string, std::string>* g_env = nullptr;
const char* fakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

AgentOptions with(std::map<std::string, std::string> env) {
  g_env = &env;
  return AgentOptions::fromEnvironment(&fakeGetenv);
}

TEST(AgentOptions, ReadsEveryVariable) {
  auto o = with({{"NODEKEEPER_SOCKET", "/tmp/a.sock"},
                 {"NODEKEEPER_NODE", "a"},
                 {"NODEKEEPER_PMPI_DEADLINE_MS", "1500"},
                 {"NODEKEEPER_PMPI_HEARTBEAT_MS", "50"},
                 {"PMIX_NAMESPACE", "prterun-x-123@1"}});
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.socket_path, "/tmp/a.sock");
  EXPECT_EQ(o.node, "a");
  EXPECT_EQ(o.fixed_deadline.count(), 1500);
  EXPECT_EQ(o.heartbeat.count(), 50);
  EXPECT_EQ(o.job_id, "prterun-x-123@1");
  EXPECT_TRUE(o.warnings.empty());
}

TEST(AgentOptions, JobIdPrefersTheOverrideThenTheLauncher) {
  EXPECT_EQ(with({{"NODEKEEPER_JOB_ID", "mine"}, {"PMIX_NAMESPACE", "ns"}}).job_id, "mine");
  EXPECT_EQ(with({{"SLURM_JOB_ID", "77"}, {"SLURM_STEP_ID", "3"}}).job_id, "77.3");
  EXPECT_EQ(with({}).job_id, "");  // rank 0 makes one
  EXPECT_FALSE(with({}).node.empty());  // the host name
}

TEST(AgentOptions, PmixIsUsedUnlessTurnedOff) {
  EXPECT_TRUE(with({}).use_pmix);
  EXPECT_FALSE(with({}).verbose);
  EXPECT_FALSE(with({{"NODEKEEPER_PMPI_PMIX", "off"}}).use_pmix);
  EXPECT_TRUE(with({{"NODEKEEPER_PMPI_PMIX", "on"}}).use_pmix);
  EXPECT_TRUE(with({{"NODEKEEPER_PMPI_VERBOSE", "1"}}).verbose);
  EXPECT_FALSE(with({{"NODEKEEPER_PMPI_VERBOSE", "0"}}).verbose);
}

TEST(AgentOptions, BadValuesWarnAndKeepDefaults) {
  auto o = with({{"NODEKEEPER_PMPI_DEADLINE_MS", "soon"}, {"NODEKEEPER_PMPI_HEARTBEAT_MS", "1"}, {"NODEKEEPER_PMPI", "off"}});
  EXPECT_FALSE(o.enabled);
  EXPECT_EQ(o.fixed_deadline.count(), 0);
  EXPECT_EQ(o.heartbeat.count(), 200);
  ASSERT_EQ(o.warnings.size(), 2u);
  EXPECT_NE(o.warnings[0].find("NODEKEEPER_PMPI_DEADLINE_MS=\"soon\""), std::string::npos) << o.warnings[0];
  EXPECT_NE(o.warnings[1].find("10 to 600000"), std::string::npos) << o.warnings[1];
}

}  // namespace
}  // namespace nk::pmpi
