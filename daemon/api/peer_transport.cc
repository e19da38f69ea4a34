#include "api/peer_transport.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

namespace nk {

Result<std::shared_ptr<PeerTransport>> PeerTransport::overMutualTls(PeerTlsFiles files, PeerTlsCopies copies) {
  if (Status s = copies.write(files); !s) return s.error();
  auto transport = std::make_shared<PeerTransport>();
  transport->provider_ = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      copies.identityPath().string(), copies.identityPath().string(), copies.caPath().string(),
      static_cast<unsigned>(kPickedUpWithin.count()));
  transport->in_force_ = std::move(files);
  transport->copies_ = std::move(copies);
  return transport;
}

std::string PeerTransport::describe() const {
  std::lock_guard lock(mutex_);
  if (!in_force_) return {};
  return "this node is " + in_force_->subject() + " (valid until " + in_force_->expiry() + "), peers must chain to " +
         in_force_->caSubject();
}

Status PeerTransport::replace(PeerTlsFiles files) {
  if (!copies_) return failedPrecondition("peer traffic is in clear: there are no TLS files to replace");
  std::lock_guard lock(mutex_);
  if (Status s = copies_->write(files); !s) return s;
  in_force_ = std::move(files);
  return {};
}

std::shared_ptr<grpc::ServerCredentials> PeerTransport::serverCredentials() const {
  if (!provider_) return grpc::InsecureServerCredentials();
  grpc::experimental::TlsServerCredentialsOptions options(provider_);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  return grpc::experimental::TlsServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> PeerTransport::channelCredentials(std::string_view endpoint) const {
  if (!provider_ || endpoint.starts_with("unix:")) return grpc::InsecureChannelCredentials();
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider_);
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  // Said outright: the certificate must name the host this channel dials.
  options.set_certificate_verifier(std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace nk
