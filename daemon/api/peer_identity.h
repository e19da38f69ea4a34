#pragma once

#include <string_view>

#include "base/result.h"
#include "node/access_policy.h"

namespace grpc {
class ServerContextBase;
}

namespace nk {

// Who is calling, from the kernel: the daemon hands each accepted Unix
// connection to gRPC by fd, so the peer string is "fd:N" and SO_PEERCRED on
// N gives pid, uid and gid. Never from anything the client sends.
class PeerIdentity {
 public:
  static Result<PeerCredentials> fromContext(const grpc::ServerContextBase& context);
  static Result<PeerCredentials> fromPeerString(std::string_view peer);
  // SO_PEERCRED only, without the supplementary groups (a read of /proc):
  // for calls made many times a second that need a role only now and then;
  // addGroups() completes the credentials when they do.
  static Result<PeerCredentials> withoutGroups(const grpc::ServerContextBase& context);
  static void addGroups(PeerCredentials& peer);

 private:
  static Result<PeerCredentials> kernelCredentials(std::string_view peer);
};

}  // namespace nk
