#pragma once

#include <filesystem>

#include "base/result.h"
#include "platform/peer_tls_files.h"
#include "platform/trusted_directory.h"

namespace nk {

// The peer key, certificate and CA that the daemon has checked
// (PeerTlsFiles), copied into a directory of its own, where gRPC's
// certificate file watcher reads them every second. That is how a
// certificate replaced on SIGHUP reaches new handshakes without a restart:
// gRPC 1.51 takes changing key material only from files. Only checked
// material is copied here, and gRPC never reads the operator's files.
//
// The watcher reads the key and the certificate chain one after the other
// and tells whether they changed in between by their modification times, in
// whole seconds. So both live in one file (the key, then the chain), and
// each copy is dated at least a second after the one it replaces: a reader
// never pairs a new certificate with an old key.
class PeerTlsCopies {
 public:
  // DIR (created mode 0700; what is in it belongs to the daemon).
  static Result<PeerTlsCopies> open(const std::filesystem::path& dir);

  // Replaces the copies: the CA first, then the key and chain.
  Status write(const PeerTlsFiles& files) const;

  // The private key, then the certificate chain, in PEM.
  std::filesystem::path identityPath() const { return dir_.path() / kIdentity; }
  std::filesystem::path caPath() const { return dir_.path() / kCa; }

 private:
  explicit PeerTlsCopies(TrustedDirectory dir) : dir_(std::move(dir)) {}
  Status replace(const char* name, const std::string& contents) const;

  static constexpr const char* kIdentity = "identity.pem";
  static constexpr const char* kCa = "ca.pem";
  TrustedDirectory dir_;
};

}  // namespace nk
