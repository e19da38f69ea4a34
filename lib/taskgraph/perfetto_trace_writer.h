#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "perfetto/perfetto_trace.pb.h"
#include "taskgraph/task_run_sink.h"

namespace nk {

// Task runs as a Perfetto trace in its protobuf format (the file
// ui.perfetto.dev and trace_processor open), written as they come: each
// TracePacket goes out length-delimited as field 1 of Trace, so the output
// is a valid Trace at every packet boundary and nothing is held per task.
//
// The mapping: one process track (the session), one thread track per worker
// ("thread N"); per run a SLICE_BEGIN at its start and a SLICE_END at its
// end on its thread's track, named by its function (interned: a name is
// sent once, then a run costs about 60 bytes). The begin carries debug
// annotations "task" and "parent" (when it has one); the end "failed",
// "unfinished" (closed at the session's end) or "cut" (closed with the run
// enclosing it) when they apply. Flow ids from the tracker: the
// predecessor's end starts the arrow, the successor's begin ends it.
// All packets are on one sequence (trusted_packet_sequence_id 1); the
// timestamps are the runtime's (CLOCK_MONOTONIC) nanoseconds.
class PerfettoTraceWriter final : public TaskRunSink {
 public:
  // `label` names the process track (the session or recording).
  PerfettoTraceWriter(std::ostream& out, std::string label);

  void sessionStart(int64_t ns) override;
  void nameFunction(uint32_t function, std::string_view name) override;
  void begin(const Run& run, std::span<const Dependence> dependences, std::span<const uint64_t> flows_in) override;
  void end(const Run& run, const End& end, std::span<const uint64_t> flows_out) override;

  uint64_t bytesWritten() const { return bytes_; }

  // The fixed interned debug-annotation names.
  enum AnnotationName : uint64_t { kTaskName = 1, kParentName, kFailedName, kUnfinishedName, kCutName };
  static constexpr uint64_t kProcessTrack = 1;
  static constexpr uint32_t kSequence = 1;
  // The track of a worker (-1: unknown thread).
  static uint64_t threadTrack(int32_t thread) { return 0x100 + static_cast<uint64_t>(static_cast<int64_t>(thread) + 1); }

 private:
  void write();
  void describeThread(int32_t thread);
  perfetto::protos::TrackEvent* event(int64_t ns, const Run& run);

  std::ostream& out_;
  std::string label_;
  perfetto::protos::TracePacket packet_;
  std::string buffer_;
  std::set<int32_t> threads_;
  std::vector<bool> sent_;                  // per function index
  std::vector<std::string> names_;
  uint64_t bytes_ = 0;
};

}  // namespace nk
