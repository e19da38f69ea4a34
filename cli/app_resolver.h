#pragma once

#include <cstdint>

#include "base/result.h"
#include "nodekeeper/v1/apps.pb.h"

namespace nk::cli {

// Finds the app a user means by the number they typed. App ids come first:
// they are what `nodekeeper apps` shows in its first column; a pid is the
// fallback for users who know their process but not its id.
class AppResolver {
 public:
  static Result<nodekeeper::v1::App> resolve(uint64_t id_or_pid, const nodekeeper::v1::AppList& apps);
};

}  // namespace nk::cli
