#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace nk {

class PeerTransport;

// The TCP server other daemons call (--listen): the fault tree service, and
// health checking and reflection only where the caller has authenticated.
// Over mutual TLS the handshake has checked its certificate before any
// call; in clear, health and reflection are not served at all, since they
// would answer anyone without the peer token.
class PeerListener {
 public:
  static Result<std::unique_ptr<grpc::Server>> start(const std::string& address, grpc::Service& service,
                                                     const PeerTransport& transport);
  // Whether HOST:PORT listens on every interface: 0.0.0.0, [::] (in any
  // spelling). Such an address also takes calls from networks the site
  // may not trust.
  static bool listensOnEveryInterface(std::string_view address);
};

}  // namespace nk
