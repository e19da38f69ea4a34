#include "cli/apps_formatter.h"

#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/table.h"
#include "cli/value_formatter.h"
#include "base/units.h"

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;
using Json = nlohmann::ordered_json;

std::string dump(const Json& value) { return value.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

std::string watts(uint64_t milliwatts) { return ValueFormatter::power(static_cast<double>(milliwatts) / 1000.0); }

std::string orDash(const std::string& text) { return text.empty() ? "-" : text; }

std::string shownPolicy(const pb::App& app) {
  return orDash(app.effective_policy().empty() ? app.policy() : app.effective_policy());
}

std::string affinity(const pb::AppThread& thread) {
  if (thread.affinity().cpus().empty()) return "unpinned";
  const auto& cpus = thread.affinity().cpus();
  return "cpus " + formatCpuList(std::vector<uint32_t>(cpus.begin(), cpus.end()));
}

// The threads line up among themselves, not with the app columns above
// them: they are details of one row, not rows of the table.
std::string threadLines(const pb::App& app) {
  Table table({{""}, {""}, {""}, {""}});
  for (const auto& thread : app.threads())
    table.addRow({"tid " + std::to_string(thread.tid()), "omp " + std::to_string(thread.omp_thread_num()),
                  "core " + (thread.core() < 0 ? std::string("-") : std::to_string(thread.core())), affinity(thread)});
  return table.empty() ? std::string() : table.render("    ", false);
}

std::string render(const google::protobuf::RepeatedPtrField<pb::App>& apps) {
  Table table({{"ID", Table::Align::kRight},
               {"PID", Table::Align::kRight},
               {"NAME"},
               {"MANAGED"},
               {"POLICY"},
               {"D", Table::Align::kRight},
               {"BUDGET", Table::Align::kRight},
               {"POWER", Table::Align::kRight},
               {"ENERGY", Table::Align::kRight}});
  for (const auto& app : apps) {
    // 0 mW is "not measured yet", not an idle app.
    table.addRow({std::to_string(app.app_id()), std::to_string(app.pid()), orDash(app.name()),
                  app.managed() ? "yes" : "no", shownPolicy(app),
                  AppsFormatter::threads(app), AppsFormatter::budget(app),
                  app.measured_power_mw() == 0 ? "-" : watts(app.measured_power_mw()),
                  ValueFormatter::energy(app.energy_j())});
  }
  std::istringstream rows(table.render());
  std::string out;
  std::string line;
  std::getline(rows, line);
  out += line + "\n";
  for (const auto& app : apps) {
    std::getline(rows, line);
    out += line + "\n";
    // Why it is over its budget, under its row: too long for a column.
    if (!app.over_budget_reason().empty()) out += "    " + app.over_budget_reason() + "\n";
    out += threadLines(app);
  }
  return out;
}

// What the accounting could give to no app, so that the apps' energy is
// read against the whole.
std::string energyTotals(const pb::AppList& apps) {
  if (apps.accounted_energy_j() <= 0) return "";
  return "unattributed: " + ValueFormatter::energy(apps.unattributed_energy_j()) + " of the " +
         ValueFormatter::energy(apps.accounted_energy_j()) +
         " the packages used while apps ran (other processes' share, packages no app used)\n";
}

Json threadJson(const pb::AppThread& thread) {
  Json cpus = Json::array();
  for (uint32_t cpu : thread.affinity().cpus()) cpus.push_back(cpu);
  return {{"tid", thread.tid()},
          {"omp_thread_num", thread.omp_thread_num()},
          {"core", thread.core() < 0 ? Json(nullptr) : Json(thread.core())},
          {"affinity", cpus}};
}

Json appObject(const pb::App& app) {
  Json threads = Json::array();
  for (const auto& thread : app.threads()) threads.push_back(threadJson(thread));
  return {{"id", app.app_id()},
          {"pid", app.pid()},
          {"uid", app.uid()},
          {"name", app.name()},
          {"managed", app.managed()},
          {"policy", app.policy()},
          {"effective_policy", app.effective_policy()},
          {"threads_d", app.thread_count()},
          {"max_threads", app.max_threads()},
          {"budget_mw", app.power_budget_mw()},
          {"effective_budget_mw", app.effective_budget_mw()},
          {"budget_floor_mw", app.budget_floor_mw() == 0 ? Json(nullptr) : Json(app.budget_floor_mw())},
          {"budget_attainable", !AppsFormatter::budgetUnattainable(app)},
          {"budget_warning", app.budget_warning()},
          {"over_budget_reason", app.over_budget_reason()},
          {"power_mw", app.measured_power_mw()},
          {"team_size", app.reported_team_size()},
          {"control_attached", app.control_attached()},
          {"energy_j", app.energy_j()},
          {"job_id", app.job_id()},
          {"start_ns", app.start_ns()},
          {"end_ns", app.end_ns()},
          {"end_detail", app.end_detail()},
          {"threads", threads}};
}

}  // namespace

std::string AppsFormatter::budget(const pb::App& app) {
  std::string text = app.power_budget_mw() == 0 ? "-" : watts(app.power_budget_mw());
  // The energy manager may hold an app below what was asked for (node cap,
  // sharing with other apps); that is the number that explains its speed.
  if (app.effective_budget_mw() != 0 && app.effective_budget_mw() != app.power_budget_mw())
    text += " (eff " + watts(app.effective_budget_mw()) + ")";
  if (budgetUnattainable(app)) text += " unattainable, floor " + watts(app.budget_floor_mw());
  return text;
}

bool AppsFormatter::budgetUnattainable(const pb::App& app) {
  return app.power_budget_mw() != 0 && app.budget_floor_mw() > app.power_budget_mw();
}

std::string AppsFormatter::threads(const pb::App& app) {
  if (app.thread_count() == 0 && app.max_threads() == 0) return "-";
  auto number = [](uint32_t value) { return value == 0 ? std::string("-") : std::to_string(value); };
  return number(app.thread_count()) + "/" + number(app.max_threads());
}

std::string AppsFormatter::appsText(const pb::AppList& apps) {
  if (apps.apps().empty()) return "no apps registered\n" + energyTotals(apps);
  return render(apps.apps()) + energyTotals(apps);
}

std::string AppsFormatter::endedAppsText(const pb::AppList& apps) {
  if (apps.apps().empty()) return "no ended apps\n";
  Table table({{"ID", Table::Align::kRight},
               {"PID", Table::Align::kRight},
               {"UID", Table::Align::kRight},
               {"NAME"},
               {"JOB"},
               {"START"},
               {"END"},
               {"HOW"},
               {"ENERGY", Table::Align::kRight}});
  for (const auto& app : apps.apps())
    table.addRow({std::to_string(app.app_id()), std::to_string(app.pid()), std::to_string(app.uid()),
                  orDash(app.name()), orDash(app.job_id()), ValueFormatter::timestamp(app.start_ns()), ValueFormatter::timestamp(app.end_ns()),
                  orDash(app.end_detail()), ValueFormatter::energy(app.energy_j())});
  return table.render();
}

std::string AppsFormatter::appsJson(const pb::AppList& apps) {
  Json list = Json::array();
  for (const auto& app : apps.apps()) list.push_back(appObject(app));
  return dump(Json{{"apps", list},
                   {"packages_energy_j", apps.packages_energy_j()},
                   {"accounted_energy_j", apps.accounted_energy_j()},
                   {"unattributed_energy_j", apps.unattributed_energy_j()}});
}

std::string AppsFormatter::appText(const pb::App& app) {
  google::protobuf::RepeatedPtrField<pb::App> one;
  *one.Add() = app;
  // The reply to a change says it once more in words: the table shows the
  // floor, this says what it means.
  return render(one) + (app.budget_warning().empty() ? "" : "warning: " + app.budget_warning() + "\n");
}

std::string AppsFormatter::appJson(const pb::App& app) { return dump(appObject(app)); }

std::string AppsFormatter::appPolicyText(const pb::App& app) {
  std::string label = std::to_string(app.app_id()) + " (" + (app.name().empty() ? std::string() : app.name() + ", ") +
                      "pid " + std::to_string(app.pid()) + ")";
  std::string policy = app.policy().empty() ? "(node default) " + orDash(app.effective_policy()) : app.policy();
  return "App     " + label + "\nPolicy  " + policy + "\n";
}

std::string AppsFormatter::appPolicyJson(const pb::App& app) {
  return dump(Json{{"app_id", app.app_id()}, {"policy", app.policy()}, {"effective_policy", app.effective_policy()}});
}

}  // namespace nk::cli
