#include "api/peer_transport.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

namespace nk {

std::string PeerTransport::describe() const {
  if (!tls_) return {};
  return "this node is " + tls_->subject() + ", peers must chain to " + tls_->caSubject();
}

std::shared_ptr<grpc::ServerCredentials> PeerTransport::serverCredentials() const {
  if (!tls_) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls_->caPem();
  options.pem_key_cert_pairs.push_back({tls_->privateKeyPem(), tls_->certificatePem()});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> PeerTransport::channelCredentials(std::string_view endpoint) const {
  if (!tls_ || endpoint.starts_with("unix:")) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls_->caPem();
  options.pem_private_key = tls_->privateKeyPem();
  options.pem_cert_chain = tls_->certificatePem();
  return grpc::SslCredentials(options);
}

}  // namespace nk
