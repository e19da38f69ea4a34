#pragma once

#include <optional>

#include "taskgraph/task_event_translator.h"
#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/recording_reader.h"
#include "tasks/session_registry.h"

namespace nk {

// A session's recording read from its start and then followed while the
// session is live: what Watch and Debug send their frontends, one frame at
// a time as their streams take them. Frames come as recorded (packed) or
// expanded into TaskEvents for frontends that do not read the packed form.
class RecordingFollower {
 public:
  // kFrame: the next frame was given; kLive: none recorded yet; kEnded: the
  // session is over and every frame was given.
  enum class Progress { kFrame, kLive, kEnded };

  // A session whose recording was never started or has been removed has
  // nothing to replay: FAILED_PRECONDITION, saying why.
  static Status checkRecorded(const SessionRegistry::Info& info);

  static Result<RecordingFollower> open(const SessionRegistry& sessions, SessionRegistry::Info info, bool packed);

  // The next frame into `out` (replacing what it held). A damaged recording
  // is an error (DATA_LOSS) unless it is an append in progress.
  Result<Progress> next(nodekeeper::v1::TaskEventBatch& out);

 private:
  RecordingFollower(const SessionRegistry& sessions, SessionRegistry::Info info, bool packed, RecordingReader reader)
      : sessions_(&sessions), info_(std::move(info)), packed_(packed), reader_(std::move(reader)) {}

  // The next recorded frame as the frontend wants it, or nothing on disk yet.
  Result<bool> read(nodekeeper::v1::TaskEventBatch& out);

  const SessionRegistry* sessions_;
  SessionRegistry::Info info_;
  bool packed_;
  RecordingReader reader_;
  TaskEventTranslator translator_;  // function names carry across frames
  nodekeeper::v1::TaskEventBatch batch_;
};

}  // namespace nk
