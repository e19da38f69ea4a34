#include "platform/peer_tls_copies.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace nk {

Result<PeerTlsCopies> PeerTlsCopies::open(const std::filesystem::path& dir) {
  auto opened = TrustedDirectory::openOrCreate(dir);
  if (!opened) return opened.error();
  // The key is mode 0600 as well; the directory keeps even its name private.
  if (::fchmod(opened->fd(), 0700) != 0)
    return unavailable("cannot make " + dir.string() + " private (chmod 700): " + std::strerror(errno));
  return PeerTlsCopies(std::move(*opened));
}

Status PeerTlsCopies::write(const PeerTlsFiles& files) const {
  // The CA first: a peer's new certificate may chain only to the new CA,
  // and this node's new certificate is taken by peers that trust either.
  if (Status s = replace(kCa, files.caPem()); !s) return s;
  std::string identity = files.privateKeyPem();
  if (!identity.empty() && identity.back() != '\n') identity += '\n';
  identity += files.certificatePem();
  return replace(kIdentity, identity);
}

Status PeerTlsCopies::replace(const char* name, const std::string& contents) const {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  timespec dated{now.tv_sec, 0};
  struct stat old {};
  if (::fstatat(dir_.fd(), name, &old, AT_SYMLINK_NOFOLLOW) == 0)
    dated.tv_sec = std::max(dated.tv_sec, old.st_mtim.tv_sec + 1);
  return dir_.replaceFile(name, contents, 0600, dated);
}

}  // namespace nk
