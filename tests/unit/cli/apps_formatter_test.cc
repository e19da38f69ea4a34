#include "cli/apps_formatter.h"

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;

// Two apps: one managed (own policy, budget held lower, threads placed),
// one just registered (no budget, node policy, nothing measured).
pb::AppList makeApps() {
  pb::AppList apps;
  pb::App* probe = apps.add_apps();
  probe->set_app_id(1);
  probe->set_pid(41230);
  probe->set_uid(1000);
  probe->set_name("omp_probe");
  probe->set_power_budget_mw(40000);
  probe->set_effective_budget_mw(35000);
  probe->set_measured_power_mw(31250);
  probe->set_policy("thermal-aware");
  probe->set_effective_policy("thermal-aware");
  probe->set_thread_count(8);
  probe->set_max_threads(12);
  probe->set_reported_team_size(8);
  probe->set_control_attached(true);
  probe->set_managed(true);
  probe->set_energy_j(1234.5);
  probe->set_job_id("slurm-77");
  probe->set_start_ns(1714564801LL * 1000000000LL);
  pb::AppThread* master = probe->add_threads();
  master->set_tid(41230);
  master->set_omp_thread_num(0);
  master->set_core(2);
  master->mutable_affinity()->add_cpus(4);
  master->mutable_affinity()->add_cpus(5);
  pb::AppThread* worker = probe->add_threads();
  worker->set_tid(41231);
  worker->set_omp_thread_num(1);
  worker->set_core(-1);

  pb::App* fresh = apps.add_apps();
  fresh->set_app_id(2);
  fresh->set_pid(500);
  fresh->set_uid(0);
  fresh->set_name("");
  fresh->set_effective_policy("ondemand");
  return apps;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(AppsFormatter, TableHasARowPerAppAndALinePerThread) {
  auto text = lines(AppsFormatter::appsText(makeApps()));
  ASSERT_EQ(text.size(), 5u) << AppsFormatter::appsText(makeApps());
  EXPECT_EQ(text[0].rfind("ID", 0), 0u);
  for (const char* title : {"PID", "NAME", "MANAGED", "POLICY", "D", "BUDGET", "POWER", "ENERGY"})
    EXPECT_NE(text[0].find(title), std::string::npos) << title;

  // App rows start at the left margin, thread lines are indented below them.
  EXPECT_NE(text[1].find("41230"), std::string::npos);
  EXPECT_NE(text[1].find("omp_probe"), std::string::npos);
  EXPECT_NE(text[1].find("thermal-aware"), std::string::npos);
  EXPECT_NE(text[1].find("8/12"), std::string::npos);
  EXPECT_NE(text[1].find("40.0 W (eff 35.0 W)"), std::string::npos) << text[1];
  EXPECT_NE(text[1].find("31.2 W"), std::string::npos) << text[1];
  EXPECT_NE(text[1].find("1.23 kJ"), std::string::npos) << text[1];

  EXPECT_EQ(text[2].rfind("    tid 41230", 0), 0u) << text[2];
  EXPECT_NE(text[2].find("omp 0"), std::string::npos);
  EXPECT_NE(text[2].find("core 2"), std::string::npos);
  EXPECT_NE(text[2].find("cpus 4-5"), std::string::npos) << text[2];
  EXPECT_EQ(text[3].rfind("    tid 41231", 0), 0u) << text[3];
  EXPECT_NE(text[3].find("core -"), std::string::npos) << text[3];
  EXPECT_NE(text[3].find("unpinned"), std::string::npos) << text[3];
  // The thread columns line up with each other.
  EXPECT_EQ(text[2].find("omp"), text[3].find("omp"));
  EXPECT_EQ(text[2].find("core"), text[3].find("core"));

  // The fresh app: its POLICY is the effective (node) one, the rest unknown.
  EXPECT_NE(text[4].find("ondemand"), std::string::npos) << text[4];
  EXPECT_NE(text[4].find("500"), std::string::npos);
  EXPECT_EQ(text[4].find(" W"), std::string::npos) << text[4];
  EXPECT_NE(text[4].find("0.0 J"), std::string::npos) << text[4];
  // The managed app says so; the one registered for task events only does not.
  const size_t managed_column = text[0].find("MANAGED");
  EXPECT_EQ(text[1].substr(managed_column, 4), "yes ") << text[1];
  EXPECT_EQ(text[4].substr(managed_column, 3), "no ") << text[4];
  // Columns are aligned: POLICY starts at the same place in both rows.
  EXPECT_EQ(text[1].find("thermal-aware"), text[4].find("ondemand"));
}

TEST(AppsFormatter, EmptyList) { EXPECT_EQ(AppsFormatter::appsText(pb::AppList()), "no apps registered\n"); }

TEST(AppsFormatter, Budget) {
  pb::App app;
  EXPECT_EQ(AppsFormatter::budget(app), "-");
  app.set_power_budget_mw(40000);
  EXPECT_EQ(AppsFormatter::budget(app), "40.0 W");
  app.set_effective_budget_mw(40000);
  EXPECT_EQ(AppsFormatter::budget(app), "40.0 W");
  app.set_effective_budget_mw(35000);
  EXPECT_EQ(AppsFormatter::budget(app), "40.0 W (eff 35.0 W)");
  // No budget of its own, but held to a share of the node's cap.
  app.set_power_budget_mw(0);
  EXPECT_EQ(AppsFormatter::budget(app), "- (eff 35.0 W)");
}

TEST(AppsFormatter, ABudgetUnderTheFloorIsShownUnattainable) {
  pb::App app;
  app.set_app_id(3);
  app.set_pid(77);
  app.set_power_budget_mw(5000);
  app.set_budget_floor_mw(26500);
  app.set_budget_warning("budget 5.0 W is below what the app can reach (about 26.5 W ...): accepted, but it cannot be met");
  EXPECT_TRUE(AppsFormatter::budgetUnattainable(app));
  EXPECT_EQ(AppsFormatter::budget(app), "5.0 W unattainable, floor 26.5 W");
  auto text = lines(AppsFormatter::appText(app));
  ASSERT_EQ(text.size(), 3u);
  EXPECT_NE(text[1].find("5.0 W unattainable, floor 26.5 W"), std::string::npos) << text[1];
  EXPECT_EQ(text[2], "warning: " + app.budget_warning());
  auto json = nlohmann::json::parse(AppsFormatter::appJson(app));
  EXPECT_EQ(json["budget_floor_mw"], 26500);
  EXPECT_EQ(json["budget_attainable"], false);
  EXPECT_EQ(json["budget_warning"], app.budget_warning());

  // At or over the floor, or with the floor unknown: nothing to say.
  app.set_budget_warning("");
  app.set_power_budget_mw(26500);
  EXPECT_FALSE(AppsFormatter::budgetUnattainable(app));
  EXPECT_EQ(AppsFormatter::budget(app), "26.5 W");
  app.set_power_budget_mw(5000);
  app.set_budget_floor_mw(0);
  EXPECT_FALSE(AppsFormatter::budgetUnattainable(app));
  EXPECT_EQ(AppsFormatter::budget(app), "5.0 W");
  json = nlohmann::json::parse(AppsFormatter::appJson(app));
  EXPECT_TRUE(json["budget_floor_mw"].is_null());
  EXPECT_EQ(json["budget_attainable"], true);
  EXPECT_EQ(lines(AppsFormatter::appText(app)).size(), 2u);
}

TEST(AppsFormatter, WhyAnAppIsOverItsBudgetIsUnderItsRow) {
  pb::AppList apps = makeApps();
  const std::string why = "over budget for 5 intervals: floor reached (D 2 at the lowest clock)";
  apps.mutable_apps(0)->set_over_budget_reason(why);
  auto text = lines(AppsFormatter::appsText(apps));
  ASSERT_GE(text.size(), 3u);
  EXPECT_NE(text[1].find("omp_probe"), std::string::npos) << text[1];
  EXPECT_EQ(text[2], "    " + why);
  auto json = nlohmann::json::parse(AppsFormatter::appsJson(apps));
  EXPECT_EQ(json["apps"][0]["over_budget_reason"], why);
  EXPECT_EQ(json["apps"][1]["over_budget_reason"], "");
  // Not over: no line.
  EXPECT_EQ(lines(AppsFormatter::appsText(makeApps())).size(), text.size() - 1);
}

TEST(AppsFormatter, Threads) {
  pb::App app;
  EXPECT_EQ(AppsFormatter::threads(app), "-");
  app.set_max_threads(12);
  EXPECT_EQ(AppsFormatter::threads(app), "-/12");
  app.set_thread_count(6);
  EXPECT_EQ(AppsFormatter::threads(app), "6/12");
}

TEST(AppsFormatter, JsonHasEveryField) {
  auto parsed = nlohmann::json::parse(AppsFormatter::appsJson(makeApps()));
  ASSERT_TRUE(parsed["apps"].is_array());
  ASSERT_EQ(parsed["apps"].size(), 2u);
  const auto& probe = parsed["apps"][0];
  EXPECT_EQ(probe["id"], 1);
  EXPECT_EQ(probe["pid"], 41230);
  EXPECT_EQ(probe["uid"], 1000);
  EXPECT_EQ(probe["name"], "omp_probe");
  EXPECT_EQ(probe["policy"], "thermal-aware");
  EXPECT_EQ(probe["effective_policy"], "thermal-aware");
  EXPECT_EQ(probe["threads_d"], 8);
  EXPECT_EQ(probe["max_threads"], 12);
  EXPECT_EQ(probe["budget_mw"], 40000);
  EXPECT_EQ(probe["effective_budget_mw"], 35000);
  EXPECT_EQ(probe["power_mw"], 31250);
  EXPECT_EQ(probe["team_size"], 8);
  EXPECT_EQ(probe["control_attached"], true);
  EXPECT_EQ(probe["managed"], true);
  EXPECT_EQ(probe["energy_j"], 1234.5);
  EXPECT_EQ(probe["job_id"], "slurm-77");
  EXPECT_EQ(probe["start_ns"], 1714564801LL * 1000000000LL);
  EXPECT_EQ(probe["end_ns"], 0);
  EXPECT_EQ(probe["end_detail"], "");
  ASSERT_EQ(probe["threads"].size(), 2u);
  EXPECT_EQ(probe["threads"][0]["tid"], 41230);
  EXPECT_EQ(probe["threads"][0]["omp_thread_num"], 0);
  EXPECT_EQ(probe["threads"][0]["core"], 2);
  EXPECT_EQ(probe["threads"][0]["affinity"], nlohmann::json::array({4, 5}));
  EXPECT_TRUE(probe["threads"][1]["core"].is_null());
  EXPECT_EQ(probe["threads"][1]["affinity"], nlohmann::json::array());

  const auto& fresh = parsed["apps"][1];
  EXPECT_EQ(fresh["policy"], "");
  EXPECT_EQ(fresh["managed"], false);
  EXPECT_EQ(fresh["effective_policy"], "ondemand");
  EXPECT_EQ(fresh["budget_mw"], 0);
  EXPECT_EQ(fresh["control_attached"], false);
  EXPECT_EQ(fresh["threads"], nlohmann::json::array());

  EXPECT_EQ(nlohmann::json::parse(AppsFormatter::appsJson(pb::AppList())),
            nlohmann::json::parse(
                R"({"apps": [], "packages_energy_j": 0, "accounted_energy_j": 0, "unattributed_energy_j": 0})"));
}

TEST(AppsFormatter, UnattributedEnergyIsSummedUpUnderTheApps) {
  pb::AppList apps = makeApps();
  apps.set_packages_energy_j(5000);
  apps.set_accounted_energy_j(2500);
  apps.set_unattributed_energy_j(12.5);
  auto text = lines(AppsFormatter::appsText(apps));
  ASSERT_EQ(text.size(), 6u);
  EXPECT_EQ(text[5],
            "unattributed: 12.5 J of the 2.50 kJ the packages used while apps ran (other processes' share, packages no "
            "app used)");
  auto parsed = nlohmann::json::parse(AppsFormatter::appsJson(apps));
  EXPECT_EQ(parsed["packages_energy_j"], 5000);
  EXPECT_EQ(parsed["accounted_energy_j"], 2500);
  EXPECT_EQ(parsed["unattributed_energy_j"], 12.5);
}

TEST(AppsFormatter, EndedAppsShowJobTimesHowAndEnergy) {
  setenv("TZ", "UTC", 1);
  tzset();
  pb::AppList apps;
  pb::App* app = apps.add_apps();
  app->set_app_id(3);
  app->set_pid(777);
  app->set_uid(1000);
  app->set_name("burn");
  app->set_job_id("42");
  app->set_start_ns(1714564801LL * 1000000000LL);
  app->set_end_ns(1714564861LL * 1000000000LL + 999999999LL);
  app->set_end_detail("gone");
  app->set_energy_j(87.3);
  pb::App* other = apps.add_apps();
  other->set_app_id(4);
  other->set_pid(778);
  other->set_end_detail("unregistered");
  EXPECT_EQ(AppsFormatter::endedAppsText(apps),
            "ID  PID   UID  NAME  JOB  START                END                  HOW           ENERGY\n"
            " 3  777  1000  burn  42   2024-05-01 12:00:01  2024-05-01 12:01:01  gone          87.3 J\n"
            " 4  778     0  -     -    -                    -                    unregistered   0.0 J\n");
  EXPECT_EQ(AppsFormatter::endedAppsText(pb::AppList()), "no ended apps\n");
}

TEST(AppsFormatter, OneAppAsTextAndJson) {
  pb::App app = makeApps().apps(0);
  auto text = lines(AppsFormatter::appText(app));
  ASSERT_EQ(text.size(), 4u);
  EXPECT_EQ(text[0].rfind("ID", 0), 0u);
  EXPECT_NE(text[1].find("40.0 W (eff 35.0 W)"), std::string::npos);

  auto parsed = nlohmann::json::parse(AppsFormatter::appJson(app));
  EXPECT_EQ(parsed["id"], 1);
  EXPECT_EQ(parsed["budget_mw"], 40000);
  EXPECT_EQ(parsed["threads"].size(), 2u);
}

TEST(AppsFormatter, AppPolicy) {
  pb::AppList apps = makeApps();
  EXPECT_EQ(AppsFormatter::appPolicyText(apps.apps(0)), "App     1 (omp_probe, pid 41230)\nPolicy  thermal-aware\n");
  EXPECT_EQ(AppsFormatter::appPolicyText(apps.apps(1)), "App     2 (pid 500)\nPolicy  (node default) ondemand\n");

  auto own = nlohmann::json::parse(AppsFormatter::appPolicyJson(apps.apps(0)));
  EXPECT_EQ(own, nlohmann::json::parse(R"({"app_id": 1, "policy": "thermal-aware", "effective_policy": "thermal-aware"})"));
  auto inherited = nlohmann::json::parse(AppsFormatter::appPolicyJson(apps.apps(1)));
  EXPECT_EQ(inherited["policy"], "");
  EXPECT_EQ(inherited["effective_policy"], "ondemand");
  EXPECT_EQ(inherited["app_id"], 2);
}

}  // namespace
}  // namespace nk::cli
