#pragma once

#include <chrono>
#include <cstdint>

#include "api/pumped_stream.h"
#include "node/telemetry_sampler.h"
#include "nodekeeper/v1/node.grpc.pb.h"

namespace nk {

// Node.StreamTelemetry: a snapshot every `interval`, never the same sample
// twice. At or below the sampler's rate it sends the sampler's samples;
// faster, or when the sampler has not produced one for a whole period of
// its own, it reads the hardware itself.
class TelemetryStream final
    : public PumpedStream<grpc::ServerWriteReactor<nodekeeper::v1::TelemetrySnapshot>,
                          nodekeeper::v1::TelemetrySnapshot> {
 public:
  using ToProto = void (*)(const TelemetrySample&, nodekeeper::v1::TelemetrySnapshot*);

  TelemetryStream(StreamHost& host, StreamHost::Slot slot, TelemetrySampler& sampler, std::chrono::milliseconds interval,
                  ToProto to_proto);

  // Looked at about ten times per interval: a sample goes out at most a
  // tenth of its interval late.
  void begin();

 private:
  Step next(nodekeeper::v1::TelemetrySnapshot& out, grpc::Status& status) override;

  TelemetrySampler& sampler_;
  const std::chrono::milliseconds interval_;
  const ToProto to_proto_;
  std::chrono::steady_clock::time_point due_;
  uint64_t last_seq_ = 0;
};

}  // namespace nk
