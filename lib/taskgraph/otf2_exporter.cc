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
#include <memory>
#include <system_error>
#include <vector>

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

// Definition references: fixed ones, and regions numbered as the graph's
// function indices.
enum : OTF2_AttributeRef { kTaskAttr, kParentAttr, kAddressAttr, kKindAttr, kFailedAttr, kUnfinishedAttr };
constexpr OTF2_ParameterRef kDependenceParam = 0;
constexpr OTF2_SystemTreeNodeRef kNode = 0;
constexpr OTF2_LocationGroupRef kProcess = 0;

// Without it OTF2 would discard a full chunk instead of writing it out.
OTF2_FlushType preFlush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
// No post-flush callback: a BufferFlush record would only mark OTF2's own
// I/O, which is not the session's time.
const OTF2_FlushCallbacks kFlushCallbacks = {preFlush, nullptr};

// One task's run as its thread's location records it.
struct Run {
  int64_t start = 0, end = 0;
  uint32_t task = 0;  // index into graph.tasks()
};

// Start order; of two runs starting together the longer encloses the other.
bool before(const Run& a, const Run& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.task < b.task;
}

bool started(const TaskGraph::Task& t) { return t.started_ns > 0; }
bool unfinished(const TaskGraph::Task& t) { return t.state != TaskState::kFinished; }

class Writer {
 public:
  Writer(const TaskGraph& graph, fs::path anchor) : graph_(graph), anchor_(std::move(anchor)) {}

  // Everything but OTF2: the runs per thread and the dependences per
  // successor.
  bool collect();
  bool write(const fs::path& dir, const std::string& name);
  const std::string& error() const { return error_; }
  bool archiveCreated() const { return created_; }
  bool failedOnExisting() const { return otf2_.code == OTF2_ERROR_EEXIST; }

 private:
  bool writeArchive(const fs::path& dir, const std::string& name);
  bool fail(const std::string& what, OTF2_ErrorCode code = OTF2_SUCCESS);
  bool writeLocation(OTF2_LocationRef location, std::vector<Run>& runs, uint64_t* events);
  bool enter(OTF2_EvtWriter* writer, const Run& run);
  bool leave(OTF2_EvtWriter* writer, const Run& run);
  bool writeDefinitions(const std::vector<uint64_t>& events);
  OTF2_TimeStamp time(int64_t ns) const { return static_cast<OTF2_TimeStamp>(ns - first_ns_); }

  const TaskGraph& graph_;
  const fs::path anchor_;
  Otf2Error otf2_;
  std::string error_;
  bool created_ = false;

  std::map<int32_t, std::vector<Run>> runs_;  // by thread; few threads
  int64_t first_ns_ = 0, last_ns_ = 0;        // of the events written
  // Dependences into task i: edges_in_[in_begin_[i] .. in_begin_[i + 1]).
  std::vector<size_t> in_begin_;
  std::vector<uint32_t> edges_in_;

  ArchivePtr archive_;
  AttributeListPtr attributes_;
  std::vector<Run> open_;  // one location's runs entered and not yet left
};

bool Writer::fail(const std::string& what, OTF2_ErrorCode code) {
  error_ = "cannot write OTF2 archive " + anchor_.string() + ": " + what;
  if (!otf2_.message.empty()) {
    error_ += ": " + otf2_.message;
  } else if (code != OTF2_SUCCESS) {
    error_ += ": " + std::string(OTF2_Error_GetDescription(code));
  }
  return false;
}

bool Writer::collect() {
  const auto& tasks = graph_.tasks();
  // A running task leaves at the latest moment the graph knows of, which
  // any of its timestamps may be.
  int64_t graph_last = 0;
  for (const TaskGraph::Task& t : tasks) graph_last = std::max({graph_last, t.created_ns, t.started_ns, t.finished_ns});

  first_ns_ = std::numeric_limits<int64_t>::max();
  std::vector<Run>* runs = nullptr;
  int32_t runs_thread = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const TaskGraph::Task& t = tasks[i];
    if (!started(t)) continue;
    // Tasks come in creation order, often on the thread of the previous.
    if (!runs || runs_thread != t.thread) {
      runs = &runs_[t.thread];
      runs_thread = t.thread;
    }
    // A finish stamped before the start (clocks of two threads) makes an
    // empty run rather than none: the task did run there.
    int64_t end = unfinished(t) ? graph_last : std::max(t.finished_ns, t.started_ns);
    runs->push_back({t.started_ns, end, static_cast<uint32_t>(i)});
    first_ns_ = std::min(first_ns_, t.started_ns);
    last_ns_ = std::max(last_ns_, end);
  }
  // OTF2's readers reject an archive without locations.
  if (runs_.empty()) return fail("no task of the graph has run yet, and an archive needs at least one thread");

  // Grouped by successor in one array (counting sort), not a vector per
  // task: a million small vectors would cost more than the export.
  const auto& edges = graph_.edges();
  if (edges.size() > std::numeric_limits<uint32_t>::max()) return fail("more dependences than it can index");
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> successor(edges.size(), kNone);
  in_begin_.assign(tasks.size() + 1, 0);
  for (size_t e = 0; e < edges.size(); ++e) {
    const std::optional<uint32_t> to = graph_.indexOf(edges[e].to);
    if (!to || !started(tasks[*to])) continue;
    successor[e] = *to;
    ++in_begin_[successor[e]];
  }
  for (size_t i = 1; i < in_begin_.size(); ++i) in_begin_[i] += in_begin_[i - 1];
  // Now in_begin_[i] is where task i's dependences end; filling backwards
  // moves it to where they begin and keeps them in recorded order.
  edges_in_.resize(in_begin_.back());
  for (size_t e = edges.size(); e-- > 0;) {
    if (successor[e] != kNone) edges_in_[--in_begin_[successor[e]]] = static_cast<uint32_t>(e);
  }
  return true;
}

bool Writer::enter(OTF2_EvtWriter* writer, const Run& run) {
  const TaskGraph::Task& t = graph_.tasks()[run.task];
  OTF2_AttributeList* attributes = attributes_.get();
  OTF2_TimeStamp at = time(run.start);
  // The attribute list empties itself with each event written.
  if (OTF2_AttributeList_AddUint64(attributes, kTaskAttr, t.id) != OTF2_SUCCESS ||
      (t.parent != 0 && OTF2_AttributeList_AddUint64(attributes, kParentAttr, t.parent) != OTF2_SUCCESS)) {
    return fail("cannot add the attributes of task " + std::to_string(t.id));
  }
  if (OTF2_ErrorCode code = OTF2_EvtWriter_Enter(writer, attributes, at, t.function); code != OTF2_SUCCESS) {
    return fail("cannot write the Enter of task " + std::to_string(t.id), code);
  }
  const auto& edges = graph_.edges();
  for (size_t i = in_begin_[run.task]; i < in_begin_[run.task + 1]; ++i) {
    const TaskGraph::Edge& e = edges[edges_in_[i]];
    if (OTF2_AttributeList_AddUint64(attributes, kAddressAttr, e.address) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddUint8(attributes, kKindAttr, e.kind) != OTF2_SUCCESS) {
      return fail("cannot add the attributes of dependence " + std::to_string(e.from) + " -> " + std::to_string(t.id));
    }
    if (OTF2_ErrorCode code = OTF2_EvtWriter_ParameterUnsignedInt(writer, attributes, at, kDependenceParam, e.from);
        code != OTF2_SUCCESS) {
      return fail("cannot write dependence " + std::to_string(e.from) + " -> " + std::to_string(t.id), code);
    }
  }
  return true;
}

bool Writer::leave(OTF2_EvtWriter* writer, const Run& run) {
  const TaskGraph::Task& t = graph_.tasks()[run.task];
  OTF2_AttributeList* attributes = attributes_.get();
  if ((t.failed && OTF2_AttributeList_AddUint8(attributes, kFailedAttr, 1) != OTF2_SUCCESS) ||
      (unfinished(t) && OTF2_AttributeList_AddUint8(attributes, kUnfinishedAttr, 1) != OTF2_SUCCESS)) {
    return fail("cannot add the attributes of task " + std::to_string(t.id));
  }
  if (OTF2_ErrorCode code = OTF2_EvtWriter_Leave(writer, attributes, time(run.end), t.function);
      code != OTF2_SUCCESS) {
    return fail("cannot write the Leave of task " + std::to_string(t.id), code);
  }
  return true;
}

bool Writer::writeLocation(OTF2_LocationRef location, std::vector<Run>& runs, uint64_t* events) {
  // Usually in order already (one thread's tasks start in creation order);
  // checking is far cheaper than sorting.
  if (!std::is_sorted(runs.begin(), runs.end(), before)) std::sort(runs.begin(), runs.end(), before);
  const std::string where = "location " + std::to_string(location);
  EvtWriterPtr writer(OTF2_Archive_GetEvtWriter(archive_.get(), location), EvtWriterCloser{archive_.get()});
  if (!writer) return fail("cannot open the event writer of " + where);

  // The open runs' ends never increase towards the top (each is cut to the
  // one enclosing it), so leaving from the top keeps time non-decreasing.
  open_.clear();
  for (const Run& run : runs) {
    while (!open_.empty() && open_.back().end <= run.start) {
      if (!leave(writer.get(), open_.back())) return false;
      open_.pop_back();
    }
    Run entered = run;
    if (!open_.empty()) entered.end = std::min(entered.end, open_.back().end);
    if (!enter(writer.get(), entered)) return false;
    open_.push_back(entered);
  }
  for (; !open_.empty(); open_.pop_back()) {
    if (!leave(writer.get(), open_.back())) return false;
  }

  if (OTF2_ErrorCode code = OTF2_EvtWriter_GetNumberOfEvents(writer.get(), events); code != OTF2_SUCCESS) {
    return fail("cannot count the events of " + where, code);
  }
  if (OTF2_ErrorCode code = OTF2_Archive_CloseEvtWriter(archive_.get(), writer.release()); code != OTF2_SUCCESS) {
    return fail("cannot write the events of " + where, code);
  }
  // Some write errors are reported only to the error callback.
  if (otf2_.code != OTF2_SUCCESS) return fail("cannot write the events of " + where);
  // Runs are done with; a million-task graph should not hold them twice.
  std::vector<Run>().swap(runs);
  return true;
}

bool Writer::writeDefinitions(const std::vector<uint64_t>& events) {
  // Every location needs its (here empty) local definitions file.
  if (OTF2_ErrorCode code = OTF2_Archive_OpenDefFiles(archive_.get()); code != OTF2_SUCCESS) {
    return fail("cannot open the local definition files", code);
  }
  for (OTF2_LocationRef location = 0; location < events.size(); ++location) {
    OTF2_DefWriter* local = OTF2_Archive_GetDefWriter(archive_.get(), location);
    if (!local) return fail("cannot open the definition writer of location " + std::to_string(location));
    if (OTF2_ErrorCode code = OTF2_Archive_CloseDefWriter(archive_.get(), local); code != OTF2_SUCCESS) {
      return fail("cannot write the definitions of location " + std::to_string(location), code);
    }
  }
  if (OTF2_ErrorCode code = OTF2_Archive_CloseDefFiles(archive_.get()); code != OTF2_SUCCESS) {
    return fail("cannot close the local definition files", code);
  }

  // Owned by the archive, which closes it on every path.
  OTF2_GlobalDefWriter* defs = OTF2_Archive_GetGlobalDefWriter(archive_.get());
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

  keep(OTF2_GlobalDefWriter_WriteClockProperties(defs, 1'000'000'000, 0, time(last_ns_), OTF2_UNDEFINED_TIMESTAMP));
  OTF2_StringRef empty = string("");
  const std::vector<std::string>& functions = graph_.functions();
  for (OTF2_RegionRef region = 0; region < functions.size(); ++region) {
    OTF2_StringRef name = string(functions[region].empty() ? "task" : functions[region]);
    keep(OTF2_GlobalDefWriter_WriteRegion(defs, region, name, name, empty, OTF2_REGION_ROLE_TASK, OTF2_PARADIGM_USER,
                                          OTF2_REGION_FLAG_NONE, empty, 0, 0));
  }
  OTF2_StringRef node = string("node");
  keep(OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, kNode, node, node, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
  keep(OTF2_GlobalDefWriter_WriteLocationGroup(defs, kProcess, string("process"), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                               kNode, OTF2_UNDEFINED_LOCATION_GROUP));
  OTF2_LocationRef location = 0;
  for (const auto& [thread, runs] : runs_) {
    std::string name = thread < 0 ? "unknown thread" : "thread " + std::to_string(thread);
    keep(OTF2_GlobalDefWriter_WriteLocation(defs, location, string(name), OTF2_LOCATION_TYPE_CPU_THREAD,
                                            events[location], kProcess));
    ++location;
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
           AttributeDef{kUnfinishedAttr, "unfinished", "1: still running when exported; left at the graph's end",
                        OTF2_TYPE_UINT8},
       }) {
    OTF2_StringRef name = string(a.name);
    keep(OTF2_GlobalDefWriter_WriteAttribute(defs, a.ref, name, string(a.description), a.type));
  }
  keep(OTF2_GlobalDefWriter_WriteParameter(defs, kDependenceParam, string("dependence on"),
                                           OTF2_PARAMETER_TYPE_UINT64));
  if (code != OTF2_SUCCESS) return fail("cannot write the global definitions", code);
  if (OTF2_ErrorCode c = OTF2_Archive_CloseGlobalDefWriter(archive_.get(), defs); c != OTF2_SUCCESS) {
    return fail("cannot write the global definitions", c);
  }
  return true;
}

bool Writer::write(const fs::path& dir, const std::string& name) {
  Otf2ErrorCapture capture(&otf2_);
  if (writeArchive(dir, name)) return true;
  // Closed now, not at destruction: the caller removes what it wrote, and
  // OTF2's complaints while closing belong to this export.
  archive_.reset();
  return false;
}

bool Writer::writeArchive(const fs::path& dir, const std::string& name) {
  archive_.reset(OTF2_Archive_Open(dir.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                                   OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!archive_) return fail("cannot open it");
  created_ = true;
  if (OTF2_ErrorCode code = OTF2_Archive_SetFlushCallbacks(archive_.get(), &kFlushCallbacks, nullptr);
      code != OTF2_SUCCESS) {
    return fail("cannot set the flush callbacks", code);
  }
  // One process: OTF2's "collectives" are local. This is also where OTF2
  // creates the archive's directories.
  if (OTF2_ErrorCode code = OTF2_Archive_SetSerialCollectiveCallbacks(archive_.get()); code != OTF2_SUCCESS) {
    return fail("cannot create it", code);
  }
  OTF2_Archive_SetCreator(archive_.get(), "nodekeeper");
  OTF2_Archive_SetDescription(archive_.get(), "a task session's graph");
  if (OTF2_ErrorCode code = OTF2_Archive_OpenEvtFiles(archive_.get()); code != OTF2_SUCCESS) {
    return fail("cannot open the event files", code);
  }
  attributes_.reset(OTF2_AttributeList_New());
  if (!attributes_) return fail("cannot allocate an attribute list");

  std::vector<uint64_t> events;
  events.reserve(runs_.size());
  OTF2_LocationRef location = 0;
  for (auto& [thread, runs] : runs_) {
    if (!writeLocation(location++, runs, &events.emplace_back())) return false;
  }
  if (OTF2_ErrorCode code = OTF2_Archive_CloseEvtFiles(archive_.get()); code != OTF2_SUCCESS) {
    return fail("cannot close the event files", code);
  }
  if (!writeDefinitions(events)) return false;

  // Writes the anchor file; its failures show only in the callback.
  OTF2_ErrorCode code = OTF2_Archive_Close(archive_.release());
  if (code != OTF2_SUCCESS || otf2_.code != OTF2_SUCCESS) return fail("cannot close it", code);
  return true;
}

bool plainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

}  // namespace

bool Otf2Exporter::write(const TaskGraph& graph, const fs::path& archive_dir, std::string_view archive_name,
                         std::string* error) {
  std::string ignored;
  std::string& message = error ? *error : ignored;
  if (!plainName(archive_name)) {
    message = "invalid OTF2 archive name \"" + std::string(archive_name) + "\": must be a file name without '/'";
    return false;
  }
  const std::string name(archive_name);
  const fs::path anchor = archive_dir / (name + ".otf2");

  // Checked here rather than left to OTF2, which creates missing
  // directories (a typo would scatter archives) and names no path.
  std::error_code ec;
  fs::file_status dir_status = fs::status(archive_dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    message = "cannot write OTF2 archive " + anchor.string() + ": directory " + archive_dir.string() + ": " +
              ec.message();
    return false;
  }
  if (!fs::exists(dir_status)) {
    message = "cannot write OTF2 archive " + anchor.string() + ": directory " + archive_dir.string() +
              " does not exist";
    return false;
  }
  if (!fs::is_directory(dir_status)) {
    message = "cannot write OTF2 archive " + anchor.string() + ": " + archive_dir.string() + " is not a directory";
    return false;
  }
  if (::access(archive_dir.c_str(), W_OK | X_OK) != 0) {
    message = "cannot write OTF2 archive " + anchor.string() + ": directory " + archive_dir.string() +
              " is not writable: " + std::strerror(errno);
    return false;
  }
  // OTF2 would write over an existing anchor and mix event files into an
  // existing folder.
  const fs::path parts[] = {anchor, archive_dir / (name + ".def"), archive_dir / name};
  for (const fs::path& part : parts) {
    fs::file_status s = fs::symlink_status(part, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
      message = "cannot write OTF2 archive " + anchor.string() + ": " + part.string() + ": " + ec.message();
      return false;
    }
    if (fs::exists(s)) {
      message = "cannot write OTF2 archive " + anchor.string() + ": " + part.string() +
                " already exists (refusing to mix two archives; remove it or choose another name)";
      return false;
    }
  }

  Writer writer(graph, anchor);
  if (writer.collect() && writer.write(archive_dir, name)) return true;
  message = writer.error();
  // None of the parts existed before (unless one appeared since, which
  // OTF2 reports as existing): what is there now is this export's debris.
  if (writer.archiveCreated() && !writer.failedOnExisting()) {
    for (const fs::path& part : parts) fs::remove_all(part, ec);
  }
  return false;
}

}  // namespace nk
