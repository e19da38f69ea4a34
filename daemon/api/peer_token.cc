#include "api/peer_token.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <grpcpp/grpcpp.h>
#include <sstream>

#include "api/status_mapping.h"

namespace nk {

namespace {

constexpr size_t kMinBytes = 16;
constexpr size_t kMaxBytes = 4096;

bool equalInConstantTime(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

Result<PeerToken> PeerToken::load(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return invalidArgument("peer token file " + path.string() + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return invalidArgument("peer token file " + path.string() + " is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return invalidArgument("peer token file " + path.string() + " has mode " + mode +
                           ": others than its owner may read it; chmod 600 " + path.string());
  }
  if (static_cast<size_t>(st.st_size) > kMaxBytes + 64)
    return invalidArgument("peer token file " + path.string() + " is larger than " + std::to_string(kMaxBytes) +
                           " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalidArgument("cannot read peer token file " + path.string() + ": " + std::strerror(errno));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string token = buffer.str();
  const char* space = " \t\r\n";
  token.erase(0, token.find_first_not_of(space) == std::string::npos ? token.size() : token.find_first_not_of(space));
  token.erase(token.find_last_not_of(space) + 1);
  if (token.size() < kMinBytes || token.size() > kMaxBytes)
    return invalidArgument("peer token in " + path.string() + " has " + std::to_string(token.size()) +
                           " bytes; use " + std::to_string(kMinBytes) + " to " + std::to_string(kMaxBytes) +
                           " (e.g. head -c 32 /dev/urandom | base64 > " + path.string() + ")");
  for (char c : token)
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
      return invalidArgument("peer token in " + path.string() +
                             " holds a character that is not printable ASCII (gRPC metadata cannot carry it)");
  return fromText(std::move(token));
}

void PeerToken::attach(grpc::ClientContext& context) const {
  if (configured()) context.AddMetadata(std::string(kMetadataKey), token_);
}

grpc::Status PeerToken::check(const grpc::ServerContext& context) const {
  if (!configured()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(grpc::string_ref(kMetadataKey.data(), kMetadataKey.size()));
  if (it == metadata.end())
    return unauthenticatedStatus("no peer token: daemons of a fault tree send the shared token (--peer-token)");
  if (!equalInConstantTime(std::string_view(it->second.data(), it->second.size()), token_))
    return unauthenticatedStatus("wrong peer token");
  return grpc::Status::OK;
}

}  // namespace nk
