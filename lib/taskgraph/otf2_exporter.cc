#include "taskgraph/otf2_exporter.h"

#include <otf2/otf2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "taskgraph/task_run_tracker.h"

namespace nk {

namespace {

namespace fs = std::filesystem;

// OTF2 passes the cause of a failure (errno's text, the file) only to its
// error callback, and some failures only there: OTF2_Archive_Close returns
// success even when it could not write the anchor file. So an export
// collects OTF2's first error on its thread; later ones are mostly that
// one's consequences.
struct Otf2Error {
  OTF2_ErrorCode code = OTF2_SUCCESS;
  std::string message;
};
thread_local Otf2Error* t_capture = nullptr;

OTF2_ErrorCode onOtf2Error(void*, const char* file, uint64_t line, const char*, OTF2_ErrorCode code,
                           const char* format, va_list va) {
  char message[512];
  std::vsnprintf(message, sizeof message, format, va);
  if (t_capture && code > OTF2_SUCCESS) {
    if (t_capture->code == OTF2_SUCCESS) {
      t_capture->code = code;
      t_capture->message = std::string(OTF2_Error_GetDescription(code)) + ": " + message;
    }
  } else {
    // As OTF2's default handler would, for warnings and for OTF2 use
    // outside an export.
    std::fprintf(stderr, "[OTF2] %s:%llu: %s: %s: %s\n", file, static_cast<unsigned long long>(line),
                 code > OTF2_SUCCESS ? "error" : "warning", OTF2_Error_GetDescription(code), message);
  }
  return code;
}

class Otf2ErrorCapture {
 public:
  explicit Otf2ErrorCapture(Otf2Error* into) : previous_(t_capture) {
    static const bool registered = (OTF2_Error_RegisterCallback(onOtf2Error, nullptr), true);
    (void)registered;
    t_capture = into;
  }
  ~Otf2ErrorCapture() { t_capture = previous_; }
  Otf2ErrorCapture(const Otf2ErrorCapture&) = delete;
  Otf2ErrorCapture& operator=(const Otf2ErrorCapture&) = delete;

 private:
  Otf2Error* previous_;
};

struct ArchiveCloser {
  void operator()(OTF2_Archive* archive) const { OTF2_Archive_Close(archive); }
};
struct AttributeListDeleter {
  void operator()(OTF2_AttributeList* list) const { OTF2_AttributeList_Delete(list); }
};
struct EvtWriterCloser {
  OTF2_Archive* archive;
  void operator()(OTF2_EvtWriter* writer) const { OTF2_Archive_CloseEvtWriter(archive, writer); }
};
using ArchivePtr = std::unique_ptr<OTF2_Archive, ArchiveCloser>;
using AttributeListPtr = std::unique_ptr<OTF2_AttributeList, AttributeListDeleter>;
using EvtWriterPtr = std::unique_ptr<OTF2_EvtWriter, EvtWriterCloser>;

// Definition references: fixed ones, and regions numbered as the tracker's
// function indices (0: unknown, "task").
enum : OTF2_AttributeRef { kTaskAttr, kParentAttr, kAddressAttr, kKindAttr, kFailedAttr, kUnfinishedAttr, kCutAttr };
constexpr OTF2_LocationRef kUnknownThreadLocation = OTF2_LocationRef{1} << 32;
constexpr OTF2_ParameterRef kDependenceParam = 0;
constexpr OTF2_SystemTreeNodeRef kNode = 0;
constexpr OTF2_LocationGroupRef kProcess = 0;

// Without it OTF2 would discard a full chunk instead of writing it out.
OTF2_FlushType preFlush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
// OTF2 keeps a location's events in memory until its pool (128 MiB per
// writer by default) is full, which made an export's memory grow with the
// session. A pool of a few chunks per buffer instead: when it is used up
// the allocation fails, and OTF2 flushes the buffer to its file (through
// preFlush), frees the chunks and starts again. (OTF2's file layer copies
// a flushed buffer once more, so a thread costs about twice its pool.)
constexpr size_t kChunksPerBuffer = 2;
struct ChunkPool {
  std::vector<std::unique_ptr<char[]>> chunks;
};
void* allocateChunk(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, uint64_t size) {
  // OTF2 owns the pool through its opaque pointer until the final free.
  if (!*per_buffer) *per_buffer = std::make_unique<ChunkPool>().release();
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (pool->chunks.size() >= kChunksPerBuffer) return nullptr;
  pool->chunks.push_back(std::make_unique_for_overwrite<char[]>(size));
  return pool->chunks.back().get();
}
void freeAllChunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (!pool) return;
  pool->chunks.clear();
  if (final) {
    std::unique_ptr<ChunkPool> owned(pool);
    *per_buffer = nullptr;
  }
}
const OTF2_MemoryCallbacks kMemoryCallbacks = {allocateChunk, freeAllChunks};
// No post-flush callback: a BufferFlush record would only mark OTF2's own
// I/O, which is not the session's time.
const OTF2_FlushCallbacks kFlushCallbacks = {preFlush, nullptr};


bool plainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

struct Otf2Exporter::Impl {
  fs::path anchor;
  std::vector<fs::path> parts;  // what the archive consists of, removed on failure
  Otf2Error otf2;
  std::optional<Otf2ErrorCapture> capture;
  std::string error;            // the first failure
  bool closed = false;          // written whole
  ArchivePtr archive;
  AttributeListPtr attributes;
  struct Location {
    OTF2_LocationRef ref = 0;
    OTF2_EvtWriter* writer = nullptr;  // owned by the archive
  };
  std::map<int32_t, Location> locations;  // by thread; few threads
  std::vector<std::string> names{""};     // by function index
  std::optional<int64_t> origin;  // graph export: times from the first Enter
  std::optional<int64_t> first_enter;

  ~Impl() {
    // Closed now, and the capture after: OTF2's complaints while closing
    // belong to this export.
    archive.reset();
    capture.reset();
    if (!closed) {
      std::error_code ec;
      for (const fs::path& part : parts) fs::remove_all(part, ec);
    }
  }

  bool fail(const std::string& what, OTF2_ErrorCode code = OTF2_SUCCESS) {
    if (!error.empty()) return false;
    error = "cannot write OTF2 archive " + anchor.string() + ": " + what;
    if (!otf2.message.empty()) {
      error += ": " + otf2.message;
    } else if (code != OTF2_SUCCESS) {
      error += ": " + std::string(OTF2_Error_GetDescription(code));
    }
    return false;
  }
  OTF2_TimeStamp time(int64_t ns) const {
    const int64_t from = origin.value_or(0);
    return ns <= from ? 0 : static_cast<OTF2_TimeStamp>(ns - from);
  }
  OTF2_EvtWriter* writerOf(int32_t thread);
  bool openArchive(const fs::path& dir, const std::string& name);
  bool writeDefinitions(int64_t last_ns, const std::vector<std::pair<OTF2_LocationRef, uint64_t>>& events,
                        const std::vector<int32_t>& threads);
};

bool Otf2Exporter::Impl::openArchive(const fs::path& dir, const std::string& name) {
  capture.emplace(&otf2);
  archive.reset(OTF2_Archive_Open(dir.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                                  OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!archive) return fail("cannot open it");
  if (OTF2_ErrorCode code = OTF2_Archive_SetFlushCallbacks(archive.get(), &kFlushCallbacks, nullptr);
      code != OTF2_SUCCESS) {
    return fail("cannot set the flush callbacks", code);
  }
  if (OTF2_ErrorCode code = OTF2_Archive_SetMemoryCallbacks(archive.get(), &kMemoryCallbacks, nullptr);
      code != OTF2_SUCCESS) {
    return fail("cannot set the memory callbacks", code);
  }
  // One process: OTF2's "collectives" are local. This is also where OTF2
  // creates the archive's directories.
  if (OTF2_ErrorCode code = OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()); code != OTF2_SUCCESS) {
    return fail("cannot create it", code);
  }
  OTF2_Archive_SetCreator(archive.get(), "nodekeeper");
  OTF2_Archive_SetDescription(archive.get(), "a task session's runs");
  if (OTF2_ErrorCode code = OTF2_Archive_OpenEvtFiles(archive.get()); code != OTF2_SUCCESS) {
    return fail("cannot open the event files", code);
  }
  attributes.reset(OTF2_AttributeList_New());
  if (!attributes) return fail("cannot allocate an attribute list");
  return true;
}

OTF2_EvtWriter* Otf2Exporter::Impl::writerOf(int32_t thread) {
  auto [it, added] = locations.try_emplace(thread);
  if (added) {
    it->second.ref = thread < 0 ? kUnknownThreadLocation : static_cast<OTF2_LocationRef>(thread);
    it->second.writer = OTF2_Archive_GetEvtWriter(archive.get(), it->second.ref);
    if (!it->second.writer) fail("cannot open the event writer of location " + std::to_string(it->second.ref));
  }
  return it->second.writer;
}

bool Otf2Exporter::Impl::writeDefinitions(int64_t last_ns,
                                          const std::vector<std::pair<OTF2_LocationRef, uint64_t>>& events,
                                          const std::vector<int32_t>& threads) {
  // Every location needs its (here empty) local definitions file.
  if (OTF2_ErrorCode code = OTF2_Archive_OpenDefFiles(archive.get()); code != OTF2_SUCCESS) {
    return fail("cannot open the local definition files", code);
  }
  for (const auto& [location, count] : events) {
    OTF2_DefWriter* local = OTF2_Archive_GetDefWriter(archive.get(), location);
    if (!local) return fail("cannot open the definition writer of location " + std::to_string(location));
    if (OTF2_ErrorCode code = OTF2_Archive_CloseDefWriter(archive.get(), local); code != OTF2_SUCCESS) {
      return fail("cannot write the definitions of location " + std::to_string(location), code);
    }
  }
  if (OTF2_ErrorCode code = OTF2_Archive_CloseDefFiles(archive.get()); code != OTF2_SUCCESS) {
    return fail("cannot close the local definition files", code);
  }

  // Owned by the archive, which closes it on every path.
  OTF2_GlobalDefWriter* defs = OTF2_Archive_GetGlobalDefWriter(archive.get());
  if (!defs) return fail("cannot open the global definition writer");
  // A few hundred records at most: check once at the end.
  OTF2_ErrorCode code = OTF2_SUCCESS;
  auto keep = [&code](OTF2_ErrorCode c) {
    if (code == OTF2_SUCCESS) code = c;
  };
  OTF2_StringRef next_string = 0;
  auto string = [&](const std::string& s) {
    keep(OTF2_GlobalDefWriter_WriteString(defs, next_string, s.c_str()));
    return next_string++;
  };

  // Streamed, the events keep the runtime's stamps (the first Enter is not
  // known until the end) and the global offset marks where the trace begins.
  const OTF2_TimeStamp offset = origin ? 0 : time(first_enter.value_or(last_ns));
  keep(OTF2_GlobalDefWriter_WriteClockProperties(defs, 1'000'000'000, offset,
                                                 time(std::max(last_ns, first_enter.value_or(last_ns))) - offset,
                                                 OTF2_UNDEFINED_TIMESTAMP));
  OTF2_StringRef empty = string("");
  for (OTF2_RegionRef region = 0; region < names.size(); ++region) {
    OTF2_StringRef name = string(names[region].empty() ? "task" : names[region]);
    keep(OTF2_GlobalDefWriter_WriteRegion(defs, region, name, name, empty, OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_USER,
                                          OTF2_REGION_FLAG_NONE, empty, 0, 0));
  }
  OTF2_StringRef node = string("node");
  keep(OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, kNode, node, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
  keep(OTF2_GlobalDefWriter_WriteLocationGroup(defs, kProcess, string("process"), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                               kNode, OTF2_UNDEFINED_LOCATION_GROUP));
  for (size_t i = 0; i < events.size(); ++i) {
    std::string name = threads[i] < 0 ? "unknown thread" : "thread " + std::to_string(threads[i]);
    keep(OTF2_GlobalDefWriter_WriteLocation(defs, events[i].first, string(name), OTF2_LOCATION_TYPE_CPU_THREAD,
                                            events[i].second, kProcess));
  }
  struct AttributeDef {
    OTF2_AttributeRef ref;
    const char* name;
    const char* description;
    OTF2_Type type;
  };
  for (const AttributeDef& a : {
           AttributeDef{kTaskAttr, "task", "the task's id", OTF2_TYPE_UINT64},
           AttributeDef{kParentAttr, "parent", "the id of the task that created it", OTF2_TYPE_UINT64},
           AttributeDef{kAddressAttr, "address", "the dependence's address", OTF2_TYPE_UINT64},
           AttributeDef{kKindAttr, "kind", "the dependence's kind (tasks.proto DependenceKind)", OTF2_TYPE_UINT8},
           AttributeDef{kFailedAttr, "failed", "1: the task failed", OTF2_TYPE_UINT8},
           AttributeDef{kUnfinishedAttr, "unfinished", "1: still running when exported; left at the session's end",
                        OTF2_TYPE_UINT8},
           AttributeDef{kCutAttr, "cut", "1: left with the run enclosing it, which finished first (lossy data)",
                        OTF2_TYPE_UINT8},
       }) {
    OTF2_StringRef name = string(a.name);
    keep(OTF2_GlobalDefWriter_WriteAttribute(defs, a.ref, name, string(a.description), a.type));
  }
  keep(OTF2_GlobalDefWriter_WriteParameter(defs, kDependenceParam, string("dependence on"),
                                           OTF2_PARAMETER_TYPE_UINT64));
  if (code != OTF2_SUCCESS) return fail("cannot write the global definitions", code);
  if (OTF2_ErrorCode c = OTF2_Archive_CloseGlobalDefWriter(archive.get(), defs); c != OTF2_SUCCESS) {
    return fail("cannot write the global definitions", c);
  }
  return true;
}

Otf2Exporter::Otf2Exporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Otf2Exporter::~Otf2Exporter() = default;

Result<std::unique_ptr<Otf2Exporter>> Otf2Exporter::open(const fs::path& archive_dir, std::string_view archive_name) {
  if (!plainName(archive_name))
    return invalidArgument("invalid OTF2 archive name \"" + std::string(archive_name) +
                           "\": must be a file name without '/'");
  const std::string name(archive_name);
  const fs::path anchor = archive_dir / (name + ".otf2");
  const std::string prefix = "cannot write OTF2 archive " + anchor.string() + ": ";

  // Checked here rather than left to OTF2, which creates missing
  // directories (a typo would scatter archives) and names no path.
  std::error_code ec;
  fs::file_status dir_status = fs::status(archive_dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return invalidArgument(prefix + "directory " + archive_dir.string() + ": " + ec.message());
  if (!fs::exists(dir_status))
    return invalidArgument(prefix + "directory " + archive_dir.string() + " does not exist");
  if (!fs::is_directory(dir_status)) return invalidArgument(prefix + archive_dir.string() + " is not a directory");
  if (::access(archive_dir.c_str(), W_OK | X_OK) != 0)
    return invalidArgument(prefix + "directory " + archive_dir.string() + " is not writable: " + std::strerror(errno));
  // OTF2 would write over an existing anchor and mix event files into an
  // existing folder.
  std::vector<fs::path> parts = {anchor, archive_dir / (name + ".def"), archive_dir / name};
  for (const fs::path& part : parts) {
    fs::file_status s = fs::symlink_status(part, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      return invalidArgument(prefix + part.string() + ": " + ec.message());
    if (fs::exists(s))
      return failedPrecondition(prefix + part.string() +
                                " already exists (refusing to mix two archives; remove it or choose another name)");
  }

  auto impl = std::make_unique<Impl>();
  impl->anchor = anchor;
  impl->parts = std::move(parts);
  if (!impl->openArchive(archive_dir, name)) {
    std::string error = impl->error;
    // None of the parts existed before, unless one appeared since, which
    // OTF2 reports as existing: then nothing here is this export's.
    if (impl->otf2.code == OTF2_ERROR_EEXIST) impl->parts.clear();
    return internalError(error);
  }
  return std::make_unique<Otf2Exporter>(std::move(impl));
}

void Otf2Exporter::setOrigin(int64_t ns) { impl_->origin = ns; }

void Otf2Exporter::sessionStart(int64_t) {}

void Otf2Exporter::nameFunction(uint32_t function, std::string_view name) {
  if (function >= impl_->names.size()) impl_->names.resize(function + 1);
  impl_->names[function] = name;
}

void Otf2Exporter::begin(const Run& run, std::span<const Dependence> dependences, std::span<const uint64_t>) {
  Impl& d = *impl_;
  if (!d.error.empty()) return;
  OTF2_EvtWriter* writer = d.writerOf(run.thread);
  if (!writer) return;
  OTF2_AttributeList* attributes = d.attributes.get();
  const OTF2_TimeStamp at = d.time(run.start_ns);
  d.first_enter = std::min(d.first_enter.value_or(run.start_ns), run.start_ns);
  const OTF2_RegionRef region = run.function < d.names.size() ? run.function : 0;
  // The attribute list empties itself with each event written.
  if (OTF2_AttributeList_AddUint64(attributes, kTaskAttr, run.task) != OTF2_SUCCESS ||
      (run.parent != 0 && OTF2_AttributeList_AddUint64(attributes, kParentAttr, run.parent) != OTF2_SUCCESS)) {
    d.fail("cannot add the attributes of task " + std::to_string(run.task));
    return;
  }
  if (OTF2_ErrorCode code = OTF2_EvtWriter_Enter(writer, attributes, at, region); code != OTF2_SUCCESS) {
    d.fail("cannot write the Enter of task " + std::to_string(run.task), code);
    return;
  }
  for (const Dependence& e : dependences) {
    if (OTF2_AttributeList_AddUint64(attributes, kAddressAttr, e.address) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddUint8(attributes, kKindAttr, e.kind) != OTF2_SUCCESS) {
      d.fail("cannot add the attributes of dependence " + std::to_string(e.from) + " -> " + std::to_string(run.task));
      return;
    }
    if (OTF2_ErrorCode code = OTF2_EvtWriter_ParameterUnsignedInt(writer, attributes, at, kDependenceParam, e.from);
        code != OTF2_SUCCESS) {
      d.fail("cannot write dependence " + std::to_string(e.from) + " -> " + std::to_string(run.task), code);
      return;
    }
  }
}

void Otf2Exporter::end(const Run& run, const End& end, std::span<const uint64_t>) {
  Impl& d = *impl_;
  if (!d.error.empty()) return;
  OTF2_EvtWriter* writer = d.writerOf(run.thread);
  if (!writer) return;
  OTF2_AttributeList* attributes = d.attributes.get();
  if ((end.failed && OTF2_AttributeList_AddUint8(attributes, kFailedAttr, 1) != OTF2_SUCCESS) ||
      (end.unfinished && OTF2_AttributeList_AddUint8(attributes, kUnfinishedAttr, 1) != OTF2_SUCCESS) ||
      (end.cut && OTF2_AttributeList_AddUint8(attributes, kCutAttr, 1) != OTF2_SUCCESS)) {
    d.fail("cannot add the attributes of task " + std::to_string(run.task));
    return;
  }
  const OTF2_RegionRef region = run.function < d.names.size() ? run.function : 0;
  if (OTF2_ErrorCode code = OTF2_EvtWriter_Leave(writer, attributes, d.time(end.end_ns), region);
      code != OTF2_SUCCESS) {
    d.fail("cannot write the Leave of task " + std::to_string(run.task), code);
  }
}

Status Otf2Exporter::close(int64_t last_ns) {
  Impl& d = *impl_;
  // OTF2's readers reject an archive without locations.
  if (d.error.empty() && d.locations.empty())
    d.fail("no task of the session has run yet, and an archive needs at least one thread");
  std::vector<std::pair<OTF2_LocationRef, uint64_t>> events;
  std::vector<int32_t> threads;
  for (auto& [thread, location] : d.locations) {
    if (!d.error.empty() || !location.writer) break;
    uint64_t count = 0;
    const std::string where = "location " + std::to_string(location.ref);
    if (OTF2_ErrorCode code = OTF2_EvtWriter_GetNumberOfEvents(location.writer, &count); code != OTF2_SUCCESS) {
      d.fail("cannot count the events of " + where, code);
      break;
    }
    OTF2_EvtWriter* writer = std::exchange(location.writer, nullptr);
    if (OTF2_ErrorCode code = OTF2_Archive_CloseEvtWriter(d.archive.get(), writer); code != OTF2_SUCCESS) {
      d.fail("cannot write the events of " + where, code);
      break;
    }
    // Some write errors are reported only to the error callback.
    if (d.otf2.code != OTF2_SUCCESS) {
      d.fail("cannot write the events of " + where);
      break;
    }
    events.emplace_back(location.ref, count);
    threads.push_back(thread);
  }
  if (d.error.empty()) {
    if (OTF2_ErrorCode code = OTF2_Archive_CloseEvtFiles(d.archive.get()); code != OTF2_SUCCESS)
      d.fail("cannot close the event files", code);
  }
  if (d.error.empty() && d.writeDefinitions(last_ns, events, threads)) {
    // Writes the anchor file; its failures show only in the callback.
    OTF2_ErrorCode code = OTF2_Archive_Close(d.archive.release());
    if (code != OTF2_SUCCESS || d.otf2.code != OTF2_SUCCESS) d.fail("cannot close it", code);
  }
  if (!d.error.empty()) {
    const std::string error = d.error;
    impl_.reset();  // removes what it wrote
    impl_ = std::make_unique<Impl>();
    impl_->closed = true;
    impl_->error = error;
    return internalError(error);
  }
  d.closed = true;
  return {};
}

bool Otf2Exporter::write(const TaskGraph& graph, const fs::path& archive_dir, std::string_view archive_name,
                         std::string* error) {
  std::string ignored;
  std::string& message = error ? *error : ignored;
  auto exporter = open(archive_dir, archive_name);
  if (!exporter) {
    message = exporter.error().message;
    return false;
  }
  // The graph as a stream: creations and dependences first, then starts
  // and finishes in time order (of two starts together the longer run
  // first, as it encloses the other; of two finishes the inner first).
  std::vector<GraphEvent> events;
  const auto& tasks = graph.tasks();
  int64_t first_start = std::numeric_limits<int64_t>::max();
  for (const TaskGraph::Task& t : tasks) {
    GraphEvent e;
    e.type = GraphEvent::Type::kCreated;
    e.task = t.id;
    e.parent = t.parent;
    e.function = graph.functions()[t.function];
    e.timestamp_ns = t.created_ns;
    if (t.created) events.push_back(e);
    if (t.started_ns > 0) first_start = std::min(first_start, t.started_ns);
  }
  for (const TaskGraph::Edge& edge : graph.edges()) {
    GraphEvent e;
    e.type = GraphEvent::Type::kDependence;
    e.task = edge.to;
    e.from = edge.from;
    e.address = edge.address;
    e.kind = edge.kind;
    events.push_back(e);
  }
  struct Step {
    int64_t at, other;  // other: the run's end for a start, its start for a finish
    bool start;
    uint32_t task;
  };
  std::vector<Step> steps;
  for (uint32_t i = 0; i < tasks.size(); ++i) {
    const TaskGraph::Task& t = tasks[i];
    if (t.started_ns <= 0) continue;
    const bool finished = t.state == TaskState::kFinished;
    const int64_t end = finished ? std::max(t.finished_ns, t.started_ns) : std::numeric_limits<int64_t>::max();
    steps.push_back({t.started_ns, end, true, i});
    if (finished) steps.push_back({end, t.started_ns, false, i});
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    if (a.at != b.at) return a.at < b.at;
    if (a.start != b.start) return !a.start;  // a run ends before the next begins
    if (a.other != b.other) return a.start ? a.other > b.other : a.other > b.other;
    return a.task < b.task;
  });
  for (const Step& s : steps) {
    const TaskGraph::Task& t = tasks[s.task];
    GraphEvent e;
    e.task = t.id;
    e.timestamp_ns = s.at;
    if (s.start) {
      e.type = GraphEvent::Type::kStarted;
      e.thread = t.thread;
    } else {
      e.type = t.failed ? GraphEvent::Type::kFailed : GraphEvent::Type::kFinished;
    }
    events.push_back(e);
  }
  if (first_start != std::numeric_limits<int64_t>::max()) (*exporter)->setOrigin(first_start);
  TaskRunTracker tracker(**exporter);
  tracker.apply(events);
  tracker.finish();
  Status closed = (*exporter)->close(tracker.lastNs());
  if (!closed) {
    message = closed.error().message;
    return false;
  }
  return true;
}

}  // namespace nk
