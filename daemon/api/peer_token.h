#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"

namespace grpc {
class ClientContext;
class ServerContext;
class Status;
}  // namespace grpc

namespace nk {

// The shared secret daemons of a fault tree prove themselves with: sent as
// metadata on every call between them, compared in constant time. Without
// one (no --peer-token), the daemon sends none and takes every caller, as
// befits a daemon that serves peers on its Unix socket alone.
class PeerToken {
 public:
  static constexpr std::string_view kMetadataKey = "x-nodekeeper-peer-token";

  PeerToken() = default;
  // The file must be a regular file, readable by its owner only (a token
  // others can read proves nothing), hold 16 to 4096 bytes of printable
  // text after trimming whitespace.
  static Result<PeerToken> load(const std::filesystem::path& path);
  static PeerToken fromText(std::string token) {
    PeerToken t;
    t.token_ = std::move(token);
    return t;
  }

  bool configured() const { return !token_.empty(); }
  void attach(grpc::ClientContext& context) const;
  // OK, or UNAUTHENTICATED naming what was wrong (never the token).
  grpc::Status check(const grpc::ServerContext& context) const;

 private:
  std::string token_;
};

}  // namespace nk
