#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "platform/peer_tls_copies.h"
#include "platform/peer_tls_files.h"

namespace grpc {
class ChannelCredentials;
class ServerCredentials;
namespace experimental {
class CertificateProviderInterface;
}
}  // namespace grpc

namespace nk {

// How this daemon's traffic with its peers goes: over mutual TLS with the
// node's certificate and the site's CA (--peer-cert, --peer-key, --peer-ca),
// or in clear. The TCP listener's credentials and every channel's come from
// here, so the two sides cannot disagree. Over TLS they take their key
// material from one provider, which replace() updates: a certificate
// renewed before it expires reaches new handshakes, both ways, without a
// restart that would drop the node out of its jobs' fault trees.
class PeerTransport {
 public:
  // In clear.
  PeerTransport() = default;
  // Over mutual TLS with `files`, copied first to `copies` for gRPC.
  static Result<std::shared_ptr<PeerTransport>> overMutualTls(PeerTlsFiles files, PeerTlsCopies copies);

  bool mutualTls() const { return copies_.has_value(); }
  // This node's certificate subject and its CA's, for the log; empty in clear.
  std::string describe() const;

  // Newly checked files in place of those in force. Handshakes begun from
  // kPickedUpWithin on use them; connections already up keep the session
  // they made. Over TLS only; on error the files in force stay.
  Status replace(PeerTlsFiles files);
  // How often gRPC looks at the copies.
  static constexpr std::chrono::seconds kPickedUpWithin{1};

  // Over TLS, a caller must present a certificate the CA signed, or the
  // handshake fails before any call is read.
  std::shared_ptr<grpc::ServerCredentials> serverCredentials() const;
  // For a channel to `endpoint`. "unix:PATH" stays in clear whatever the
  // setting: the Unix socket serves no TLS, and SO_PEERCRED tells who calls
  // there. Over TLS, the peer's certificate must name the endpoint's host.
  std::shared_ptr<grpc::ChannelCredentials> channelCredentials(std::string_view endpoint) const;

 private:
  mutable std::mutex mutex_;
  std::optional<PeerTlsFiles> in_force_;  // for describe()
  std::optional<PeerTlsCopies> copies_;
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider_;
};

}  // namespace nk
