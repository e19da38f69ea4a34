#include "taskgraph/perfetto_trace_writer.h"

namespace nk {

namespace pp = perfetto::protos;

namespace {

// Event names are interned by function index + 1: iid 0 means "none" in
// Perfetto, and function 0 (unknown) is named "task".
uint64_t nameIid(uint32_t function) { return uint64_t{function} + 1; }

void annotate(pp::TrackEvent* event, uint64_t name, uint64_t value) {
  pp::DebugAnnotation* a = event->add_debug_annotations();
  a->set_name_iid(name);
  a->set_uint_value(value);
}

void flag(pp::TrackEvent* event, uint64_t name) {
  pp::DebugAnnotation* a = event->add_debug_annotations();
  a->set_name_iid(name);
  a->set_bool_value(true);
}

}  // namespace

PerfettoTraceWriter::PerfettoTraceWriter(std::ostream& out, std::string label)
    : out_(out), label_(std::move(label)), names_{"task"} {}

void PerfettoTraceWriter::write() {
  buffer_.clear();
  packet_.SerializeToString(&buffer_);
  // Trace.packet (field 1, length-delimited): tag, varint length, bytes.
  char head[11];
  size_t n = 0;
  head[n++] = 0x0a;
  for (uint64_t size = buffer_.size();; size >>= 7) {
    if (size < 0x80) {
      head[n++] = static_cast<char>(size);
      break;
    }
    head[n++] = static_cast<char>((size & 0x7f) | 0x80);
  }
  out_.write(head, static_cast<std::streamsize>(n));
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  bytes_ += n + buffer_.size();
  packet_.Clear();
}

void PerfettoTraceWriter::sessionStart(int64_t ns) {
  // The first packet clears the sequence's interning state and names the
  // annotations every run uses.
  packet_.set_timestamp(static_cast<uint64_t>(ns));
  packet_.set_trusted_packet_sequence_id(kSequence);
  packet_.set_sequence_flags(pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  pp::TrackDescriptor* track = packet_.mutable_track_descriptor();
  track->set_uuid(kProcessTrack);
  track->set_name(label_);
  track->mutable_process()->set_pid(1);
  track->mutable_process()->set_process_name(label_);
  pp::InternedData* interned = packet_.mutable_interned_data();
  for (auto [iid, name] : {std::pair{kTaskName, "task"}, {kParentName, "parent"}, {kFailedName, "failed"},
                           {kUnfinishedName, "unfinished"}, {kCutName, "cut"}}) {
    pp::DebugAnnotationName* n = interned->add_debug_annotation_names();
    n->set_iid(iid);
    n->set_name(name);
  }
  write();
}

void PerfettoTraceWriter::nameFunction(uint32_t function, std::string_view name) {
  if (function >= names_.size()) names_.resize(function + 1);
  names_[function] = name;
}

void PerfettoTraceWriter::describeThread(int32_t thread) {
  if (!threads_.insert(thread).second) return;
  packet_.set_trusted_packet_sequence_id(kSequence);
  pp::TrackDescriptor* track = packet_.mutable_track_descriptor();
  track->set_uuid(threadTrack(thread));
  track->set_parent_uuid(kProcessTrack);
  if (thread < 0) {
    track->set_name("unknown thread");
  } else {
    // Worker 0 is the program's initial thread: tid 1 of "pid" 1.
    const std::string name = "thread " + std::to_string(thread);
    track->set_name(name);
    pp::ThreadDescriptor* t = track->mutable_thread();
    t->set_pid(1);
    t->set_tid(thread + 1);
    t->set_thread_name(name);
  }
  write();
}

pp::TrackEvent* PerfettoTraceWriter::event(int64_t ns, const Run& run) {
  packet_.set_timestamp(static_cast<uint64_t>(ns));
  packet_.set_trusted_packet_sequence_id(kSequence);
  packet_.set_sequence_flags(pp::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  pp::TrackEvent* e = packet_.mutable_track_event();
  e->set_track_uuid(threadTrack(run.thread));
  return e;
}

void PerfettoTraceWriter::begin(const Run& run, std::span<const Dependence>, std::span<const uint64_t> flows_in) {
  describeThread(run.thread);
  pp::TrackEvent* e = event(run.start_ns, run);
  e->set_type(pp::TrackEvent::TYPE_SLICE_BEGIN);
  const uint32_t function = run.function < names_.size() ? run.function : 0;
  if (function >= sent_.size()) sent_.resize(function + 1, false);
  if (!sent_[function]) {
    pp::EventName* name = packet_.mutable_interned_data()->add_event_names();
    name->set_iid(nameIid(function));
    name->set_name(names_[function].empty() ? "task" : names_[function]);
    sent_[function] = true;
  }
  e->set_name_iid(nameIid(function));
  annotate(e, kTaskName, run.task);
  if (run.parent != 0) annotate(e, kParentName, run.parent);
  for (uint64_t flow : flows_in) e->add_terminating_flow_ids(flow);
  write();
}

void PerfettoTraceWriter::end(const Run& run, const End& end, std::span<const uint64_t> flows_out) {
  pp::TrackEvent* e = event(end.end_ns, run);
  e->set_type(pp::TrackEvent::TYPE_SLICE_END);
  if (end.failed) flag(e, kFailedName);
  if (end.unfinished) flag(e, kUnfinishedName);
  if (end.cut) flag(e, kCutName);
  for (uint64_t flow : flows_out) e->add_flow_ids(flow);
  write();
}

}  // namespace nk
