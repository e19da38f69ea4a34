#include "platform/peer_tls_files.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

namespace nk {

namespace {

// What a file must be: its name in messages, its size, and whether it is
// a secret (not readable by others).
struct FileRules {
  const char* what;
  size_t max_bytes;
  bool secret;
};

constexpr FileRules kCertificate{"peer certificate", 1 << 20, false};
constexpr FileRules kPrivateKey{"peer key", 64 << 10, true};
constexpr FileRules kCa{"peer CA", 1 << 20, false};

struct FdCloser {
  void operator()(const int* fd) const {
    if (*fd >= 0) ::close(*fd);
  }
};

template <auto Free>
struct OpenSslFree {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Bio = std::unique_ptr<BIO, OpenSslFree<BIO_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using StorePtr = std::unique_ptr<X509_STORE, OpenSslFree<X509_STORE_free>>;
using StoreContextPtr = std::unique_ptr<X509_STORE_CTX, OpenSslFree<X509_STORE_CTX_free>>;
void freeCertificates(STACK_OF(X509) * certs) { sk_X509_pop_free(certs, X509_free); }
void freeList(STACK_OF(X509) * certs) { sk_X509_free(certs); }
// Owns its certificates.
using CertStack = std::unique_ptr<STACK_OF(X509), OpenSslFree<freeCertificates>>;
// Borrows them.
using CertList = std::unique_ptr<STACK_OF(X509), OpenSslFree<freeList>>;

std::string modeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The file's bytes, once its kind, owner and mode are what `rules` want.
// Opened first, then checked by its descriptor: what is checked is what is read.
Result<std::string> readChecked(const std::filesystem::path& path, const FileRules& rules) {
  const std::string name = std::string(rules.what) + " " + path.string();
  // O_NONBLOCK: a FIFO planted at the path must not hang the start.
  int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) return invalidArgument(name + ": " + std::strerror(errno));
  std::unique_ptr<const int, FdCloser> fd(&raw);
  struct stat st {};
  if (::fstat(raw, &st) != 0) return invalidArgument(name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalidArgument(name + " is not a regular file");
  const uid_t self = ::geteuid();
  if (st.st_uid != 0 && st.st_uid != self)
    return invalidArgument(name + " belongs to uid " + std::to_string(st.st_uid) +
                           ": it must belong to root or to the daemon's user (uid " + std::to_string(self) +
                           "), or another user could change whom this node trusts");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return invalidArgument(name + " has mode " + modeText(st.st_mode) +
                           ": others than its owner may change it; chmod go-w " + path.string());
  if (rules.secret && (st.st_mode & S_IRWXO) != 0)
    return invalidArgument(name + " has mode " + modeText(st.st_mode) +
                           ": other users may read the key; chmod 600 " + path.string());
  if (static_cast<uint64_t>(st.st_size) > rules.max_bytes)
    return invalidArgument(name + " is larger than " + std::to_string(rules.max_bytes) + " bytes");
  std::string bytes;
  bytes.resize(rules.max_bytes + 1);
  size_t have = 0;
  while (have < bytes.size()) {
    ssize_t n = ::read(raw, bytes.data() + have, bytes.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return invalidArgument("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  if (have > rules.max_bytes) return invalidArgument(name + " is larger than " + std::to_string(rules.max_bytes) + " bytes");
  bytes.resize(have);
  if (bytes.empty()) return invalidArgument(name + " is empty");
  return bytes;
}

Bio memoryBio(const std::string& bytes) { return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size()))); }

// Every certificate in the PEM text, in order (none: empty).
CertStack certificatesIn(const std::string& pem) {
  CertStack certs(sk_X509_new_null());
  Bio bio = memoryBio(pem);
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) sk_X509_push(certs.get(), cert);
  ERR_clear_error();  // the end of the text reads as an error
  return certs;
}

std::string subjectOf(X509* cert) {
  Bio out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long size = BIO_get_mem_data(out.get(), &data);
  return size > 0 ? std::string(data, static_cast<size_t>(size)) : std::string("(no subject)");
}

std::string commonNameOf(X509* cert) {
  X509_NAME* name = X509_get_subject_name(cert);
  int index = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (index < 0) return "";
  ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index));
  unsigned char* utf8 = nullptr;
  int length = ASN1_STRING_to_UTF8(&utf8, value);
  if (length < 0) return "";
  std::string text(reinterpret_cast<char*>(utf8), static_cast<size_t>(length));
  OPENSSL_free(utf8);
  return text;
}

std::string expiryOf(X509* cert) {
  std::tm when{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &when) != 1) return "(unreadable)";
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &when);
  return text;
}

// A key needs a passphrase: refuse to be asked for one.
int noPassphrase(char*, int, int, void*) { return -1; }

}  // namespace

Result<PeerTlsFiles> PeerTlsFiles::load(const Paths& paths) {
  auto certificate_pem = readChecked(paths.certificate, kCertificate);
  if (!certificate_pem) return certificate_pem.error();
  auto key_pem = readChecked(paths.private_key, kPrivateKey);
  if (!key_pem) return key_pem.error();
  auto ca_pem = readChecked(paths.ca, kCa);
  if (!ca_pem) return ca_pem.error();
  const std::string cert_name = "peer certificate " + paths.certificate.string();
  const std::string key_name = "peer key " + paths.private_key.string();
  const std::string ca_name = "peer CA " + paths.ca.string();

  // The node's certificate first, then any intermediates after it.
  CertStack chain = certificatesIn(*certificate_pem);
  if (sk_X509_num(chain.get()) == 0)
    return invalidArgument(cert_name + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  X509* certificate = sk_X509_value(chain.get(), 0);

  if (key_pem->find("ENCRYPTED") != std::string::npos)
    return invalidArgument(key_name + " is encrypted: the daemon cannot ask for a passphrase (openssl pkey -in " +
                           paths.private_key.string() + " -out NEW.key, mode 600)");
  Bio key_bio = memoryBio(*key_pem);
  KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, noPassphrase, nullptr));
  ERR_clear_error();
  if (!key) return invalidArgument(key_name + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
  if (X509_check_private_key(certificate, key.get()) != 1) {
    ERR_clear_error();
    return invalidArgument(key_name + " does not match " + cert_name + " (the key of another certificate?)");
  }

  CertStack authorities = certificatesIn(*ca_pem);
  if (sk_X509_num(authorities.get()) == 0)
    return invalidArgument(ca_name + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  StorePtr store(X509_STORE_new());
  for (int i = 0; i < sk_X509_num(authorities.get()); ++i) X509_STORE_add_cert(store.get(), sk_X509_value(authorities.get(), i));
  StoreContextPtr context(X509_STORE_CTX_new());
  CertList intermediates(sk_X509_new_null());
  for (int i = 1; i < sk_X509_num(chain.get()); ++i) sk_X509_push(intermediates.get(), sk_X509_value(chain.get(), i));
  if (!store || !context || X509_STORE_CTX_init(context.get(), store.get(), certificate, intermediates.get()) != 1)
    return internalError("cannot set up the check of " + cert_name + " against " + ca_name);
  if (X509_verify_cert(context.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(context.get());
    ERR_clear_error();
    return invalidArgument(cert_name + " does not verify against " + ca_name + ": " +
                           X509_verify_cert_error_string(error) +
                           " (peers that trust this CA would refuse this node)");
  }
  // OpenSSL checks the purpose of the other side's certificate in each
  // handshake; a daemon calls its peers and is called by them.
  if (X509_check_purpose(certificate, X509_PURPOSE_SSL_SERVER, 0) != 1 ||
      X509_check_purpose(certificate, X509_PURPOSE_SSL_CLIENT, 0) != 1)
    return invalidArgument(cert_name +
                           " does not allow both TLS server and client use (extendedKeyUsage needs serverAuth and "
                           "clientAuth): a daemon is both to its peers");

  PeerTlsFiles files;
  files.subject_ = subjectOf(certificate);
  files.common_name_ = commonNameOf(certificate);
  files.expiry_ = expiryOf(certificate);
  files.ca_subject_ = subjectOf(sk_X509_value(authorities.get(), 0));
  files.certificate_pem_ = std::move(*certificate_pem);
  files.private_key_pem_ = std::move(*key_pem);
  files.ca_pem_ = std::move(*ca_pem);
  return files;
}

}  // namespace nk
