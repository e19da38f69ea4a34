#include "cli/app_resolver.h"

#include <gtest/gtest.h>

namespace nk::cli {
namespace {

namespace pb = nodekeeper::v1;

pb::AppList makeApps() {
  pb::AppList apps;
  for (auto [id, pid] : std::vector<std::pair<uint64_t, int32_t>>{{1, 41230}, {2, 1}, {3, 900}}) {
    pb::App* app = apps.add_apps();
    app->set_app_id(id);
    app->set_pid(pid);
    app->set_name("app" + std::to_string(id));
  }
  return apps;
}

TEST(AppResolver, ByAppId) {
  auto app = AppResolver::resolve(3, makeApps());
  ASSERT_TRUE(app.ok()) << app.error().message;
  EXPECT_EQ(app->name(), "app3");
}

TEST(AppResolver, ByPid) {
  auto app = AppResolver::resolve(41230, makeApps());
  ASSERT_TRUE(app.ok()) << app.error().message;
  EXPECT_EQ(app->app_id(), 1u);
}

TEST(AppResolver, AppIdWinsOverAnotherAppsPid) {
  // 1 is app 1's id and app 2's pid: the id is what 'nodekeeper apps' shows first.
  auto app = AppResolver::resolve(1, makeApps());
  ASSERT_TRUE(app.ok());
  EXPECT_EQ(app->name(), "app1");
}

TEST(AppResolver, UnknownNumber) {
  auto app = AppResolver::resolve(77, makeApps());
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(app.error().message, "no app with id or pid 77 (see 'nodekeeper apps')");

  auto none = AppResolver::resolve(1, pb::AppList());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "no app with id or pid 1 (see 'nodekeeper apps')");
}

}  // namespace
}  // namespace nk::cli
