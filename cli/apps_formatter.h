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
  // The same row (and thread lines) for the one app a change returned.
  static std::string appText(const nodekeeper::v1::App& app);
  static std::string appJson(const nodekeeper::v1::App& app);

  static std::string appPolicyText(const nodekeeper::v1::App& app);
  static std::string appPolicyJson(const nodekeeper::v1::App& app);

  static std::string budget(const nodekeeper::v1::App& app);   // "40.0 W (eff 35.0 W)", "-"
  static std::string threads(const nodekeeper::v1::App& app);  // D: "8/12"
};

}  // namespace nk::cli
