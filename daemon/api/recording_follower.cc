#include "api/recording_follower.h"

namespace v1 = nodekeeper::v1;

namespace nk {

Status RecordingFollower::checkRecorded(const SessionRegistry::Info& info) {
  if (!info.recording.empty()) return {};
  return failedPrecondition("task session " + std::to_string(info.id) + " has no recording: " +
                            info.recording_stopped);
}

Result<RecordingFollower> RecordingFollower::open(const SessionRegistry& sessions, SessionRegistry::Info info,
                                                  bool packed) {
  auto reader = RecordingReader::open(info.recording);
  if (!reader) return reader.error();
  return RecordingFollower(sessions, std::move(info), packed, std::move(*reader));
}

Result<bool> RecordingFollower::read(v1::TaskEventBatch& out) {
  while (auto payload = reader_.next()) {
    if (!batch_.ParseFromArray(payload->data(), static_cast<int>(payload->size())))
      return internalError("task session " + std::to_string(info_.id) + ": a recorded batch does not parse");
    if (packed_) {
      out.Swap(&batch_);
      return true;
    }
    translator_.toStructured(batch_, out);
    if (out.events_size() > 0) return true;  // else a frame of gate reports only
  }
  return false;
}

Result<RecordingFollower::Progress> RecordingFollower::next(v1::TaskEventBatch& out) {
  auto got = read(out);
  if (!got) return got.error();
  if (*got) return Progress::kFrame;
  // A stop at a frame cut short is an append in progress (or one that
  // finished since): read it again. Any other stop is damage.
  auto damaged = [&] { return dataLoss("task session " + std::to_string(info_.id) + ": " + reader_.stopReason()); };
  if (!reader_.stopReason().empty() && !reader_.resumeAfterTruncation()) return damaged();
  if (sessions_->info(info_.id).value_or(info_).live) return Progress::kLive;
  // Ended, perhaps since the read above: a closed session has all its
  // frames on disk, so one more read finds the last of them.
  got = read(out);
  if (!got) return got.error();
  if (*got) return Progress::kFrame;
  if (!reader_.stopReason().empty()) return damaged();
  return Progress::kEnded;
}

}  // namespace nk
