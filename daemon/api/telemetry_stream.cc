#include "api/telemetry_stream.h"

#include <algorithm>

namespace nk {

TelemetryStream::TelemetryStream(StreamHost& host, StreamHost::Slot slot, TelemetrySampler& sampler,
                                 std::chrono::milliseconds interval, ToProto to_proto)
    : PumpedStream(host, std::move(slot)),
      sampler_(sampler),
      interval_(interval),
      to_proto_(to_proto),
      due_(std::chrono::steady_clock::now()) {}

void TelemetryStream::begin() {
  const auto period = host().pump().period().count();
  start(Polling::kEveryPeriod, static_cast<uint32_t>(std::max<int64_t>(1, interval_.count() / 10 / std::max<int64_t>(1, period))));
}

TelemetryStream::Step TelemetryStream::next(nodekeeper::v1::TelemetrySnapshot& out, grpc::Status&) {
  const auto now = std::chrono::steady_clock::now();
  if (now < due_) return Step::kWait;
  std::shared_ptr<const TelemetrySample> sample = sampler_.latest();
  const bool unsent = sample && sample->seq > last_seq_;
  if (interval_ >= sampler_.interval()) {
    if (!unsent) {
      if (now < due_ + sampler_.interval()) return Step::kWait;  // the sampler's next one is near
      sample = sampler_.sampleNow();                             // the sampler is stuck
    }
  } else {
    // Faster than the sampler: a sample another stream had taken within this
    // stream's interval is fresh enough, so that many fast streams cost one
    // reading of the hardware per interval, not one each.
    const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    const auto age = std::chrono::nanoseconds(now_ns - (unsent ? sample->monotonic_ns : 0));
    if (!unsent || age >= interval_) sample = sampler_.sampleNow();
  }
  last_seq_ = sample->seq;
  out.Clear();
  to_proto_(*sample, &out);
  // A reader that fell behind gets the next sample at once, not a burst.
  due_ = std::max(due_ + interval_, now);
  return Step::kSend;
}

}  // namespace nk
