#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace nk {

// The caller of an RPC as the kernel reports it (SO_PEERCRED), plus its
// supplementary groups (from /proc/<pid>/status).
struct PeerCredentials {
  pid_t pid = -1;
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::vector<gid_t> groups;
};

enum class Role { kAnyone = 1, kOwner = 2, kAdmin = 3 };

std::string_view roleName(Role role);

// Decides roles. Admin: root, members of the admin group, and the extra admin
// uids (the user running an unprivileged emulated node owns that node).
class AccessPolicy {
 public:
  AccessPolicy(std::optional<gid_t> admin_group, std::set<uid_t> extra_admin_uids);

  bool isAdmin(const PeerCredentials& peer) const;
  // `owner_uid` is the uid of the app the call is about, if any.
  Role roleOf(const PeerCredentials& peer, std::optional<uid_t> owner_uid = std::nullopt) const;

 private:
  std::optional<gid_t> admin_group_;
  std::set<uid_t> extra_admin_uids_;
};

}  // namespace nk
