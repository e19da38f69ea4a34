#pragma once

#include "api/pumped_stream.h"
#include "api/recording_follower.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"

namespace nk {

// Tasks.Watch: a session's recording from its start, frame by frame as the
// watcher takes them; with `follow`, then what is recorded until the
// session ends.
class RecordingWatchStream final
    : public PumpedStream<grpc::ServerWriteReactor<nodekeeper::v1::TaskEventBatch>, nodekeeper::v1::TaskEventBatch> {
 public:
  RecordingWatchStream(StreamHost& host, StreamHost::Slot slot, RecordingFollower follower, bool follow)
      : PumpedStream(host, std::move(slot)), follower_(std::move(follower)), follow_(follow) {}

  void begin() { start(follow_ ? Polling::kEveryPeriod : Polling::kWhenWoken); }

 private:
  Step next(nodekeeper::v1::TaskEventBatch& out, grpc::Status& status) override;

  RecordingFollower follower_;
  const bool follow_;
};

}  // namespace nk
