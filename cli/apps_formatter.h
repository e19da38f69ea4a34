#pragma once

#include <string>

#include "nodekeeper/v1/apps.pb.h"

namespace nk::cli {

// Renders AppsService replies ("apps", "budget", "policy --app") as tables or
// JSON. Pure, like ControlFormatter.
class AppsFormatter {
 public:
  // One row per app, each followed by an indented line per thread.
  static std::string appsText(const nodekeeper::v1::AppList& apps);
  static std::string appsJson(const nodekeeper::v1::AppList& apps);
  // `apps --ended`: one row per ended app, with its job, start, end, how it
  // ended and its energy.
  static std::string endedAppsText(const nodekeeper::v1::AppList& apps);
  // The same row (and thread lines) for the one app a change returned, and
  // the daemon's warning when there is one.
  static std::string appText(const nodekeeper::v1::App& app);
  static std::string appJson(const nodekeeper::v1::App& app);

  static std::string appPolicyText(const nodekeeper::v1::App& app);
  static std::string appPolicyJson(const nodekeeper::v1::App& app);

  // "40.0 W (eff 35.0 W)", "-"; "5.0 W unattainable, floor 26.5 W" under the
  // app's floor.
  static std::string budget(const nodekeeper::v1::App& app);
  // A budget under the floor the daemon estimated (unknown floor: false).
  static bool budgetUnattainable(const nodekeeper::v1::App& app);
  static std::string threads(const nodekeeper::v1::App& app);  // D: "8/12"
};

}  // namespace nk::cli
