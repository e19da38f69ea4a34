#pragma once

namespace nk {

// gRPC's own log lines go to the daemon's log, rate-limited. gRPC writes an
// error line to stderr for each failed TLS handshake, so anyone who can
// reach the peer port could otherwise add lines without end; at most a few
// a minute are kept, and how many were not is said.
class GrpcLogBridge {
 public:
  // Once, before the first server or channel is made.
  static void install();
};

}  // namespace nk
