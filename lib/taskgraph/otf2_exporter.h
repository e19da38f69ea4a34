#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "taskgraph/task_graph.h"
#include "taskgraph/task_run_sink.h"

namespace nk {

// A session's task runs as an OTF2 archive (libotf2), for Vampir, Score-P's
// tools and otf2-print, written as TaskRunTracker finds them (streamed: it
// holds nothing per finished task). The mapping:
//  - one system tree node "node", one location group "process" and one
//    location ("thread N", location reference N) per thread that ran tasks
//    (an unknown thread is "unknown thread", reference 2^32);
//  - one region per function name (role TASK); tasks of unknown function
//    share a region named "task";
//  - per task run, an Enter at its start and a Leave at its end on its
//    thread's location. The Enter carries attributes "task" (its id) and
//    "parent" (when it has one); the Leave carries "failed" = 1 for a
//    failed task, "unfinished" = 1 for a run still open when the session's
//    events ended (it leaves at their last timestamp, so that a hang shows
//    as the runs open at the end), and "cut" = 1 for a run left with the
//    run enclosing it (OTF2 requires the Enters and Leaves of a location to
//    nest; runs on one thread nest but for lossy data, where an untied task
//    that moved threads keeps its first thread). Tasks that never started
//    have no events; a session where no task ran is refused, since OTF2's
//    readers reject an archive without locations.
//  - Dependences: OTF2 has no flow records, and an attribute may appear
//    only once per event, so a task with several predecessors cannot carry
//    them as attributes of its Enter. Instead each dependence recorded
//    before its successor started is a ParameterUnsignedInt event
//    ("dependence on" = the predecessor's id) right after the successor's
//    Enter, inside its region, with attributes "address" and "kind"
//    (tasks.proto's DependenceKind). Dependences into tasks that never ran
//    are only in the DOT export.
// Timestamps are nanoseconds (timer resolution 1 ns). Streamed, they are
// the runtime's own, and the clock properties' global offset is the first
// Enter (which is known only at the end); a graph written whole (write())
// has them relative to its first Enter. The realtime anchor is left
// undefined, since the runtimes' clocks are steady clocks with no
// wall-clock origin.
//
// Registers a process-wide OTF2 error callback on first use (OTF2 reports
// causes, such as errno, and failures to write the anchor file at close,
// only to that callback); OTF2 errors outside an export are still printed
// to stderr as OTF2's default handler does.
class Otf2Exporter final : public TaskRunSink {
 public:
  // Opens `archive_dir`/`archive_name`.otf2 (the anchor file that tools
  // open), `archive_name`.def and the folder `archive_name`/. The directory
  // must exist and be writable; an archive already there is refused rather
  // than mixed with this one. Errors name the path and OTF2's reason.
  static Result<std::unique_ptr<Otf2Exporter>> open(const std::filesystem::path& archive_dir,
                                                    std::string_view archive_name);
  // An archive not closed successfully is removed.
  ~Otf2Exporter() override;
  Otf2Exporter(const Otf2Exporter&) = delete;
  Otf2Exporter& operator=(const Otf2Exporter&) = delete;

  // Times relative to `ns` (before any event) instead of the runtime's.
  void setOrigin(int64_t ns);

  void sessionStart(int64_t ns) override;
  void nameFunction(uint32_t function, std::string_view name) override;
  void begin(const Run& run, std::span<const Dependence> dependences, std::span<const uint64_t> flows_in) override;
  void end(const Run& run, const End& end, std::span<const uint64_t> flows_out) override;

  // Writes the definitions (the trace ends at `last_ns`) and the anchor
  // file. On failure, or the first failure of an event before it, returns
  // the error and removes what this archive wrote.
  Status close(int64_t last_ns);

  // The graph's runs, replayed in time order through TaskRunTracker (the
  // way tests and small graphs export). On failure returns false, sets
  // *error (if not null) and leaves nothing behind.
  static bool write(const TaskGraph& graph, const std::filesystem::path& archive_dir, std::string_view archive_name,
                    std::string* error);

  // Only open() can make an Impl.
  struct Impl;
  explicit Otf2Exporter(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk
