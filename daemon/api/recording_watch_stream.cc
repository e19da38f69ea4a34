#include "api/recording_watch_stream.h"

#include "api/status_mapping.h"

namespace nk {

RecordingWatchStream::Step RecordingWatchStream::next(nodekeeper::v1::TaskEventBatch& out, grpc::Status& status) {
  auto progress = follower_.next(out);
  if (!progress) {
    status = toGrpcStatus(progress.error());
    return Step::kFinish;
  }
  if (*progress == RecordingFollower::Progress::kFrame) return Step::kSend;
  if (*progress == RecordingFollower::Progress::kLive && follow_) return Step::kWait;
  status = grpc::Status::OK;
  return Step::kFinish;
}

}  // namespace nk
