#include "peer_identity.h"

#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <grpcpp/server_context.h>
#include <sstream>
#include <string>

#include "base/units.h"

namespace nk {

namespace {

std::vector<gid_t> supplementaryGroups(pid_t pid) {
  std::vector<gid_t> groups;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Groups:", 0) != 0) continue;
    for (std::string_view word : splitWhitespace(std::string_view(line).substr(7))) {
      gid_t gid = 0;
      auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), gid);
      if (ec == std::errc()) groups.push_back(gid);
    }
  }
  return groups;
}

}  // namespace

Result<PeerCredentials> PeerIdentity::fromContext(const grpc::ServerContextBase& context) {
  return fromPeerString(context.peer());
}

Result<PeerCredentials> PeerIdentity::fromPeerString(std::string_view peer) {
  auto credentials = kernelCredentials(peer);
  if (credentials) addGroups(*credentials);
  return credentials;
}

Result<PeerCredentials> PeerIdentity::withoutGroups(const grpc::ServerContextBase& context) {
  return kernelCredentials(context.peer());
}

void PeerIdentity::addGroups(PeerCredentials& peer) { peer.groups = supplementaryGroups(peer.pid); }

Result<PeerCredentials> PeerIdentity::kernelCredentials(std::string_view peer) {
  if (peer.rfind("fd:", 0) != 0) return permissionDenied("caller identity unknown (not a local Unix connection)");
  int fd = -1;
  auto [ptr, ec] = std::from_chars(peer.data() + 3, peer.data() + peer.size(), fd);
  if (ec != std::errc() || fd < 0) return permissionDenied("caller identity unknown (peer '" + std::string(peer) + "')");
  ucred cred{};
  socklen_t length = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0)
    return permissionDenied(std::string("caller identity unknown: SO_PEERCRED: ") + std::strerror(errno));
  PeerCredentials out;
  out.pid = cred.pid;
  out.uid = cred.uid;
  out.gid = cred.gid;
  return out;
}

}  // namespace nk
