#include "cli/app_resolver.h"

#include <string>

namespace nk::cli {

Result<nodekeeper::v1::App> AppResolver::resolve(uint64_t id_or_pid, const nodekeeper::v1::AppList& apps) {
  for (const auto& app : apps.apps())
    if (app.app_id() == id_or_pid) return app;
  for (const auto& app : apps.apps())
    if (app.pid() > 0 && static_cast<uint64_t>(app.pid()) == id_or_pid) return app;
  return notFound("no app with id or pid " + std::to_string(id_or_pid) + " (see 'nodekeeper apps')");
}

}  // namespace nk::cli
