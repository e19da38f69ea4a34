#pragma once

#include <functional>
#include <optional>

#include "taskgraph/task_event_translator.h"
#include "base/result.h"
#include "nodekeeper/v1/tasks.pb.h"
#include "taskgraph/recording_reader.h"
#include "tasks/session_registry.h"

namespace nk {

// A session's recording read from its start and then followed while the
// session is live: what Watch and Debug send their frontends. Frames come
// as recorded (packed) or expanded into TaskEvents for frontends that do
// not read the packed form.
class RecordingFollower {
 public:
  enum class Progress { kLive, kEnded, kLeft };  // kLeft: the writer refused (the frontend went)

  static Result<RecordingFollower> open(const SessionRegistry& sessions, SessionRegistry::Info info, bool packed);

  // Writes every frame recorded since the last call. A damaged recording is
  // an error (DATA_LOSS) unless it is an append in progress.
  Result<Progress> pump(const std::function<bool(const nodekeeper::v1::TaskEventBatch&)>& write);

 private:
  RecordingFollower(const SessionRegistry& sessions, SessionRegistry::Info info, bool packed, RecordingReader reader)
      : sessions_(&sessions), info_(std::move(info)), packed_(packed), reader_(std::move(reader)) {}

  const SessionRegistry* sessions_;
  SessionRegistry::Info info_;
  bool packed_;
  RecordingReader reader_;
  TaskEventTranslator translator_;  // function names carry across frames
  nodekeeper::v1::TaskEventBatch batch_, structured_;
};

}  // namespace nk
