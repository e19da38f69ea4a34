#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "taskgraph/task_graph.h"

namespace nk {

// A session's graph as an OTF2 archive (libotf2), for Vampir, Score-P's
// tools and otf2-print. The mapping:
//  - one system tree node "node", one location group "process" and one
//    location ("thread N") per thread that ran tasks;
//  - one region per function name (role TASK); tasks of unknown function
//    share a region named "task";
//  - per task that ran, an Enter at its start and a Leave at its finish on
//    its thread's location. The Enter carries attributes "task" (its id)
//    and "parent" (when it has one); the Leave carries "failed" = 1 for a
//    failed task.
//  - Tasks still running at export time leave at the graph's last
//    timestamp with "unfinished" = 1, so that a hang shows as the runs
//    still open at the end. Tasks that never started have no events; a
//    graph where no task has started yet is refused, since OTF2's readers
//    reject an archive without locations.
//  - Dependences: OTF2 has no flow records, and an attribute may appear
//    only once per event, so a task with several predecessors cannot carry
//    them as attributes of its Enter. Instead each dependence whose
//    successor ran is a ParameterUnsignedInt event ("dependence on" = the
//    predecessor's id) right after the successor's Enter, inside its
//    region, with attributes "address" and "kind" (tasks.proto's
//    DependenceKind). Dependences into tasks that never ran are only in the
//    DOT and Perfetto exports.
// Timestamps are nanoseconds (timer resolution 1 ns) relative to the first
// Enter; the realtime anchor is left undefined, since the runtimes' clocks
// are steady clocks with no wall-clock origin.
//
// OTF2 requires the Enters and Leaves of one location to nest. Runs on one
// thread nest when a task runs inside its parent's taskwait; they overlap
// without nesting only when the graph's data is lossy (an untied task that
// moved threads keeps its first thread). An inner run that would outlive
// the run enclosing it is cut at the enclosing run's end: the thread
// cannot still be inside it after leaving its caller.
class Otf2Exporter {
 public:
  // Writes `archive_dir`/`archive_name`.otf2 (the anchor file that tools
  // open), `archive_name`.def and the folder `archive_name`/. The directory
  // must exist and be writable; an archive already there is refused rather
  // than mixed with this one. On failure returns false, sets *error (if not
  // null) to a message naming the path and OTF2's reason, and removes what
  // it wrote. Streams per thread: memory is a few words per task run and
  // per dependence, besides OTF2's event chunks.
  //
  // Registers a process-wide OTF2 error callback on first use (OTF2
  // reports causes, such as errno, and failures to write the anchor file at
  // close, only to that callback); OTF2 errors outside an export are still
  // printed to stderr as OTF2's default handler does.
  static bool write(const TaskGraph& graph, const std::filesystem::path& archive_dir, std::string_view archive_name,
                    std::string* error);
};

}  // namespace nk
