#include "api/recording_follower.h"

namespace v1 = nodekeeper::v1;

namespace nk {

Result<RecordingFollower> RecordingFollower::open(const SessionRegistry& sessions, SessionRegistry::Info info,
                                                  bool packed) {
  auto reader = RecordingReader::open(info.recording);
  if (!reader) return reader.error();
  return RecordingFollower(sessions, std::move(info), packed, std::move(*reader));
}

Result<RecordingFollower::Progress> RecordingFollower::pump(const std::function<bool(const v1::TaskEventBatch&)>& write) {
  // Taken before reading: a session already closed has all its frames on
  // disk, so this pass is the last one.
  bool live = sessions_->info(info_.id).value_or(info_).live;
  while (auto payload = reader_.next()) {
    if (!batch_.ParseFromArray(payload->data(), static_cast<int>(payload->size())))
      return internalError("task session " + std::to_string(info_.id) + ": a recorded batch does not parse");
    if (!packed_) {
      translator_.toStructured(batch_, structured_);
      if (structured_.events_size() == 0) continue;  // a frame of gate reports only
    }
    if (!write(packed_ ? batch_ : structured_)) return Progress::kLeft;
  }
  if (!reader_.stopReason().empty()) {
    // Mid-append is not damage while the session is live.
    if (!(live && reader_.resumeAfterTruncation()))
      return dataLoss("task session " + std::to_string(info_.id) + ": " + reader_.stopReason());
  }
  return live ? Progress::kLive : Progress::kEnded;
}

}  // namespace nk
