#include "node/access_policy.h"

#include <gtest/gtest.h>

namespace nk {
namespace {

TEST(AccessPolicy, Roles) {
  AccessPolicy policy(gid_t{500}, {1234});
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 0, .gid = 0}), Role::kAdmin);
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 1234, .gid = 100}), Role::kAdmin);
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 1000, .gid = 500}), Role::kAdmin);
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 1000, .gid = 100, .groups = {20, 500}}), Role::kAdmin);
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 1000, .gid = 100, .groups = {20}}), Role::kAnyone);
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 1000, .gid = 100}, uid_t{1000}), Role::kOwner);
  EXPECT_EQ(policy.roleOf({.pid = 1, .uid = 1001, .gid = 100}, uid_t{1000}), Role::kAnyone);
}

TEST(AccessPolicy, NoAdminGroup) {
  AccessPolicy policy(std::nullopt, {});
  EXPECT_FALSE(policy.isAdmin({.pid = 1, .uid = 1000, .gid = 0, .groups = {0}}));
  EXPECT_TRUE(policy.isAdmin({.pid = 1, .uid = 0, .gid = 0}));
}

}  // namespace
}  // namespace nk
