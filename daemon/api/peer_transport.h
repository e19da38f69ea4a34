#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "platform/peer_tls_files.h"

namespace grpc {
class ChannelCredentials;
class ServerCredentials;
}  // namespace grpc

namespace nk {

// How this daemon's traffic with its peers goes: over mutual TLS with the
// node's certificate and the site's CA (--peer-cert, --peer-key, --peer-ca),
// or in clear. The TCP listener's credentials and every channel's come from
// here, so the two sides cannot disagree.
class PeerTransport {
 public:
  // In clear.
  PeerTransport() = default;
  explicit PeerTransport(PeerTlsFiles files) : tls_(std::move(files)) {}

  bool mutualTls() const { return tls_.has_value(); }
  // This node's certificate subject and its CA's, for the log; empty in clear.
  std::string describe() const;

  // Over TLS, a caller must present a certificate the CA signed, or the
  // handshake fails before any call is read.
  std::shared_ptr<grpc::ServerCredentials> serverCredentials() const;
  // For a channel to `endpoint`. "unix:PATH" stays in clear whatever the
  // setting: the Unix socket serves no TLS, and SO_PEERCRED tells who calls
  // there. Over TLS, the peer's certificate must name the endpoint's host.
  std::shared_ptr<grpc::ChannelCredentials> channelCredentials(std::string_view endpoint) const;

 private:
  std::optional<PeerTlsFiles> tls_;
};

}  // namespace nk
