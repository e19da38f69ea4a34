#include "taskgraph/task_event_translator.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "taskgraph/function_name_limits.h"
#include "wire/compact_events.h"
#include "wire/task_event_record.h"

namespace v1 = nodekeeper::v1;

namespace nk {

using wire::TaskEventRecord;
using wire::TaskEventType;

namespace {

GraphEvent graphEvent(const v1::TaskEvent& e) {
  GraphEvent g;
  g.timestamp_ns = e.timestamp_ns();
  switch (e.event_case()) {
    case v1::TaskEvent::kCreated:
      g.type = GraphEvent::Type::kCreated;
      g.task = e.created().task_id();
      g.parent = e.created().parent_id();
      g.function = e.created().function();
      g.priority = e.created().priority();
      break;
    case v1::TaskEvent::kDependency:
      g.type = GraphEvent::Type::kDependence;
      g.from = e.dependency().from_task();
      g.task = e.dependency().to_task();
      g.address = e.dependency().address();
      g.kind = static_cast<uint8_t>(e.dependency().kind());
      break;
    case v1::TaskEvent::kQueued:
      g.type = GraphEvent::Type::kQueued;
      g.task = e.queued().task_id();
      break;
    case v1::TaskEvent::kStarted:
      g.type = GraphEvent::Type::kStarted;
      g.task = e.started().task_id();
      g.thread = static_cast<int32_t>(e.thread());
      break;
    case v1::TaskEvent::kFinished:
      g.type = GraphEvent::Type::kFinished;
      g.task = e.finished().task_id();
      break;
    case v1::TaskEvent::kFailed:
      g.type = GraphEvent::Type::kFailed;
      g.task = e.failed().task_id();
      break;
    default:
      g.task = 0;  // not a graph event
  }
  return g;
}

std::string unknownType(const v1::PackedEvents& packed, const TaskEventRecord& r) {
  return "a packed event of thread " + std::to_string(packed.thread()) + " has unknown type " +
         std::to_string(static_cast<int>(r.type));
}

// The part's split compact form (empty if it has none).
wire::CompactEvents::Split split(const v1::PackedEvents& packed) {
  return wire::CompactEvents::Split::of(packed.compact_headers(), packed.compact_values());
}

}  // namespace

// Within FunctionNameLimits: a key past the stream's bounds stays unnamed
// (its tasks are "unknown"), and is counted.
void TaskEventTranslator::learnFunctions(const v1::TaskEventBatch& batch) {
  std::string cut;
  for (const v1::FunctionName& f : batch.functions()) {
    const std::string_view name = FunctionNameLimits::fit(f.name(), cut);
    auto it = functions_.find(f.key());
    const size_t had = it == functions_.end() ? 0 : it->second.size();
    if ((it == functions_.end() && functions_.size() >= FunctionNameLimits::kMaxNames) ||
        name_bytes_ - had + name.size() > FunctionNameLimits::kMaxStreamNameBytes) {
      ++names_not_kept_;
      continue;
    }
    name_bytes_ = name_bytes_ - had + name.size();
    if (it == functions_.end())
      functions_.emplace(f.key(), name);
    else
      it->second.assign(name);
  }
}

const std::string& TaskEventTranslator::functionName(uint64_t key) const {
  static const std::string unknown;
  auto it = functions_.find(key);
  return it == functions_.end() ? unknown : it->second;
}

std::string TaskEventTranslator::toGraphEvents(const v1::TaskEventBatch& batch, std::vector<GraphEvent>& out) {
  out.clear();
  learnFunctions(batch);
  for (const v1::TaskEvent& e : batch.events()) {
    GraphEvent g = graphEvent(e);
    if (g.task != 0) out.push_back(g);
  }
  for (const v1::PackedEvents& packed : batch.packed()) {
    if (std::string bad = unpack(packed); !bad.empty()) return bad;
    for (const TaskEventRecord& r : records_) {
      GraphEvent g;
      g.timestamp_ns = static_cast<int64_t>(r.timestamp_ns);
      g.task = r.task_id;
      switch (r.type) {
        case TaskEventType::kCreated:
          g.type = GraphEvent::Type::kCreated;
          g.parent = r.a;
          g.function = functionName(r.b);
          g.priority = static_cast<int32_t>(static_cast<int64_t>(r.c));
          break;
        case TaskEventType::kDependence:
          g.type = GraphEvent::Type::kDependence;
          g.from = r.a;
          g.address = r.b;
          g.kind = static_cast<uint8_t>(r.c);
          break;
        case TaskEventType::kQueued: g.type = GraphEvent::Type::kQueued; break;
        case TaskEventType::kStarted:
          // The runtime's worker number (OMPT: the thread's slot).
          g.type = GraphEvent::Type::kStarted;
          g.thread = static_cast<int32_t>(r.a);
          break;
        case TaskEventType::kFinished: g.type = GraphEvent::Type::kFinished; break;
        case TaskEventType::kFailed: g.type = GraphEvent::Type::kFailed; break;
        case TaskEventType::kSync:
        case TaskEventType::kRegionBegin:
        case TaskEventType::kRegionEnd: continue;
        default:
          return unknownType(packed, r);
      }
      out.push_back(g);
    }
  }
  return {};
}

void TaskEventTranslator::toStructured(const v1::TaskEventBatch& batch, v1::TaskEventBatch& out) {
  out.Clear();
  learnFunctions(batch);
  out.set_session_id(batch.session_id());
  *out.mutable_events() = batch.events();
  for (const v1::PackedEvents& packed : batch.packed()) {
    // A bad part shows what unpack kept: its whole raw records, none of a
    // compact part that does not decode. (Recordings hold only batches
    // that toGraphEvents took.)
    (void)unpack(packed);
    for (const TaskEventRecord& r : records_) {
      if (static_cast<uint8_t>(r.type) >= wire::kTaskEventTypeCount) continue;
      v1::TaskEvent* e = out.add_events();
      e->set_timestamp_ns(static_cast<int64_t>(r.timestamp_ns));
      e->set_thread(r.type == TaskEventType::kStarted ? static_cast<uint32_t>(r.a) : packed.thread());
      switch (r.type) {
        case TaskEventType::kCreated: {
          auto* c = e->mutable_created();
          c->set_task_id(r.task_id);
          c->set_parent_id(r.a);
          c->set_function(functionName(r.b));
          c->set_priority(static_cast<int32_t>(static_cast<int64_t>(r.c)));
          break;
        }
        case TaskEventType::kDependence: {
          auto* d = e->mutable_dependency();
          d->set_from_task(r.a);
          d->set_to_task(r.task_id);
          d->set_address(r.b);
          d->set_kind(static_cast<v1::DependenceKind>(r.c));
          break;
        }
        case TaskEventType::kQueued: e->mutable_queued()->set_task_id(r.task_id); break;
        case TaskEventType::kStarted: e->mutable_started()->set_task_id(r.task_id); break;
        case TaskEventType::kFinished: e->mutable_finished()->set_task_id(r.task_id); break;
        case TaskEventType::kFailed: e->mutable_failed()->set_task_id(r.task_id); break;
        case TaskEventType::kSync: {
          auto* s = e->mutable_sync();
          s->set_kind(static_cast<v1::TaskSync::Kind>(r.a));
          s->set_task_id(r.task_id);
          s->set_end(r.b != 0);
          break;
        }
        default: e->mutable_region()->set_end(r.type == TaskEventType::kRegionEnd); break;
      }
    }
  }
}

std::string TaskEventTranslator::check(const v1::TaskEventBatch& batch) {
  for (const v1::PackedEvents& packed : batch.packed()) {
    const std::string& bytes = packed.records();
    if (bytes.size() % sizeof(TaskEventRecord) != 0) return unpack(packed);
    for (size_t at = 0; at < bytes.size(); at += sizeof(TaskEventRecord))
      if (static_cast<uint8_t>(bytes[at + offsetof(TaskEventRecord, type)]) >= wire::kTaskEventTypeCount) {
        TaskEventRecord bad;
        std::memcpy(&bad, bytes.data() + at, sizeof bad);
        return unknownType(packed, bad);
      }
    const std::string& compact = packed.compact();
    std::string fault = wire::CompactEvents::check(std::as_bytes(std::span(compact.data(), compact.size())),
                                                   wire::CompactEvents::kMaxRecordsPerPart);
    if (fault.empty()) fault = wire::CompactEvents::check(split(packed), wire::CompactEvents::kMaxRecordsPerPart);
    if (!fault.empty()) return "packed events of thread " + std::to_string(packed.thread()) + ": " + fault;
  }
  return {};
}

std::string TaskEventTranslator::unpack(const v1::PackedEvents& packed) {
  records_.clear();
  const std::string& bytes = packed.records();
  const size_t whole = bytes.size() / sizeof(TaskEventRecord);
  records_.resize(whole);
  if (whole > 0) std::memcpy(records_.data(), bytes.data(), whole * sizeof(TaskEventRecord));
  if (whole * sizeof(TaskEventRecord) != bytes.size())
    return "packed events of thread " + std::to_string(packed.thread()) + " are " + std::to_string(bytes.size()) +
           " bytes, not a whole number of " + std::to_string(sizeof(TaskEventRecord)) + "-byte records";
  const std::string& compact = packed.compact();
  std::string fault = wire::CompactEvents::decode(std::as_bytes(std::span(compact.data(), compact.size())), records_,
                                                  wire::CompactEvents::kMaxRecordsPerPart);
  if (fault.empty()) fault = wire::CompactEvents::decode(split(packed), records_, wire::CompactEvents::kMaxRecordsPerPart);
  if (!fault.empty()) return "packed events of thread " + std::to_string(packed.thread()) + ": " + fault;
  resumeAfterFinishes();
  return {};
}

// A finish that names the task resuming at that moment becomes the finish
// and that task's start, so everything past here reads one event per change
// (and records from before the two were one read the same).
void TaskEventTranslator::resumeAfterFinishes() {
  auto resumes = [](const TaskEventRecord& r) {
    return (r.type == TaskEventType::kFinished || r.type == TaskEventType::kFailed) && r.a != 0;
  };
  const size_t merged = static_cast<size_t>(std::count_if(records_.begin(), records_.end(), resumes));
  if (merged == 0) return;
  size_t from = records_.size();
  records_.resize(records_.size() + merged);
  size_t to = records_.size();
  // Back to front, so each record moves once and none is overwritten unread.
  while (from > 0) {
    TaskEventRecord r = records_[--from];
    if (!resumes(r)) {
      records_[--to] = r;
      continue;
    }
    TaskEventRecord started{};
    started.type = TaskEventType::kStarted;
    started.timestamp_ns = r.timestamp_ns;
    started.task_id = r.a;
    started.a = r.c;
    records_[--to] = started;
    r.a = 0;
    r.c = 0;
    records_[--to] = r;
  }
}

}  // namespace nk
