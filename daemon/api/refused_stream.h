#pragma once

#include <grpcpp/grpcpp.h>

#include "api/stream_host.h"

namespace nk {

// A stream refused at its start (over a limit, not the caller's, a bad
// request): gRPC still wants a reactor, which ends the call with `status`.
template <class Reactor>
class RefusedStream final : public Reactor {
 public:
  RefusedStream(StreamHost& host, grpc::Status status) : host_(host) { this->Finish(std::move(status)); }
  void OnDone() override { host_.release(this); }

  // Adopted by `host`, and so freed when gRPC is done with it.
  static Reactor* make(StreamHost& host, grpc::Status status) {
    return host.adopt(std::make_unique<RefusedStream>(host, std::move(status)));
  }

 private:
  StreamHost& host_;
};

}  // namespace nk
