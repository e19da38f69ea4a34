#pragma once

#include <filesystem>
#include <string>

#include "base/result.h"

namespace nk {

// This daemon's certificate and key for mutual TLS with its peers, and the CA
// their certificates must chain to, read and checked at start (and again on
// SIGHUP), so that a bad file stops the start (or is not taken) with one
// line instead of failing every handshake later.
class PeerTlsFiles {
 public:
  struct Paths {
    std::filesystem::path certificate;
    std::filesystem::path private_key;
    std::filesystem::path ca;
  };

  // Each file must be a regular file owned by root or by the daemon's user,
  // writable by nobody else, hold PEM (the key unencrypted, and not readable
  // by others than its owner and group); the key must match the certificate,
  // and the certificate chain to the CA, be valid now and allow both TLS
  // server and client use (a daemon is both).
  static Result<PeerTlsFiles> load(const Paths& paths);

  const std::string& certificatePem() const { return certificate_pem_; }
  const std::string& privateKeyPem() const { return private_key_pem_; }
  const std::string& caPem() const { return ca_pem_; }
  // For the log: "CN=n1" and "CN=nodekeeper peer CA".
  const std::string& subject() const { return subject_; }
  const std::string& caSubject() const { return ca_subject_; }
  // The certificate's CN ("" if it has none): the node name peers know this
  // daemon by over TLS.
  const std::string& commonName() const { return common_name_; }
  // When the certificate stops being valid, for the log: "2029-03-05 10:00:00
  // UTC" (a certificate must be replaced before then; SIGHUP reloads it).
  const std::string& expiry() const { return expiry_; }

 private:
  std::string certificate_pem_;
  std::string private_key_pem_;
  std::string ca_pem_;
  std::string subject_;
  std::string ca_subject_;
  std::string common_name_;
  std::string expiry_;
};

}  // namespace nk
