#include "access_policy.h"

#include <algorithm>

namespace nk {

std::string_view roleName(Role role) {
  switch (role) {
    case Role::kAdmin: return "admin";
    case Role::kOwner: return "owner";
    case Role::kAnyone: return "anyone";
  }
  return "anyone";
}

AccessPolicy::AccessPolicy(std::optional<gid_t> admin_group, std::set<uid_t> extra_admin_uids)
    : admin_group_(admin_group), extra_admin_uids_(std::move(extra_admin_uids)) {}

bool AccessPolicy::isAdmin(const PeerCredentials& peer) const {
  if (peer.uid == 0) return true;
  if (extra_admin_uids_.count(peer.uid)) return true;
  if (!admin_group_) return false;
  return peer.gid == *admin_group_ ||
         std::find(peer.groups.begin(), peer.groups.end(), *admin_group_) != peer.groups.end();
}

Role AccessPolicy::roleOf(const PeerCredentials& peer, std::optional<uid_t> owner_uid) const {
  if (isAdmin(peer)) return Role::kAdmin;
  if (owner_uid && *owner_uid == peer.uid) return Role::kOwner;
  return Role::kAnyone;
}

}  // namespace nk
