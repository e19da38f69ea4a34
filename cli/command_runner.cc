#include "cli/command_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ext/stdio_filebuf.h>

#include "base/clock.h"
#include "base/units.h"
#include "cli/app_resolver.h"
#include "cli/apps_client.h"
#include "cli/apps_formatter.h"
#include "cli/command_line.h"
#include "cli/command_table.h"
#include "cli/control_formatter.h"
#include "cli/debug_session_runner.h"
#include "cli/faults_client.h"
#include "cli/faults_formatter.h"
#include "cli/graph_watcher.h"
#include "cli/graphviz_renderer.h"
#include "cli/interrupt_watcher.h"
#include "cli/job_commands.h"
#include "cli/jobs_client.h"
#include "cli/node_client.h"
#include "cli/recording_loader.h"
#include "cli/request_builder.h"
#include "cli/status_formatter.h"
#include "cli/tasks_client.h"
#include "cli/tasks_formatter.h"
#include "taskgraph/graph_exporter.h"
#include "taskgraph/export_window.h"
#include "taskgraph/otf2_exporter.h"
#include "taskgraph/perfetto_trace_writer.h"
#include "taskgraph/task_event_translator.h"
#include "taskgraph/task_run_tracker.h"
#include "taskgraph/task_graph.h"

#ifndef NK_VERSION
#define NK_VERSION "unknown"
#endif

namespace nk::cli {

namespace {

namespace pb = nodekeeper::v1;

std::optional<std::string> userName(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return std::nullopt;
  return std::string(found->pw_name);
}

std::optional<std::string> groupName(gid_t gid) {
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  if (getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) return std::nullopt;
  return std::string(found->gr_name);
}

// Moves the cursor home and overwrites the previous frame line by line, so
// the terminal does not flicker the way a full clear on each frame would.
std::string redrawFrame(const std::string& frame, bool first) {
  std::string out = first ? "\x1b[H\x1b[2J" : "\x1b[H";
  for (char c : frame) {
    if (c == '\n') out += "\x1b[K";
    out += c;
  }
  return out + "\x1b[J";
}

std::string intervalText(uint32_t interval_ms) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, interval_ms % 1000 == 0 ? "%.0f s" : "%.2g s", interval_ms / 1000.0);
  return buffer;
}

// The app ids the daemon hands out are its own; a user may as well type the
// pid, so the number is looked up in the current list.
Result<pb::App> findApp(uint64_t id_or_pid, AppsClient& client) {
  auto apps = client.listApps();
  if (!apps) return apps.error();
  return AppResolver::resolve(id_or_pid, *apps);
}

// The output file, created or truncated, never through a symlink: in a
// shared directory (/tmp) another user may have planted one at the path,
// pointing at a file of yours.
Result<int> openOutputFile(std::string_view command, const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0) return fd;
  if (errno == ELOOP)
    return failedPrecondition(std::string(command) + ": " + path +
                              " is a symlink; refusing to write through it (remove the link or choose another --out)");
  return unavailable(std::string(command) + ": cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

CommandRunner::CommandRunner(std::ostream& out, std::ostream& err, bool out_is_terminal, ExternalCommand ui)
    : out_(out), err_(err), out_is_terminal_(out_is_terminal), ui_(std::move(ui)) {}

int CommandRunner::fail(const std::string& message) {
  err_ << "nodekeeper: " << message << "\n";
  err_.flush();
  return 1;
}

int CommandRunner::run(const Invocation& invocation) {
  const CommandTable& table = CommandTable::instance();
  switch (invocation.action) {
    case Invocation::Action::kVersion:
      out_ << "nodekeeper " << NK_VERSION << "\n";
      return 0;
    case Invocation::Action::kHelp:
      if (invocation.help_topic.empty()) out_ << table.mainHelp();
      else if (const CommandSpec* command = table.find(invocation.help_topic)) out_ << table.commandHelp(*command);
      else out_ << table.groupHelp(invocation.help_topic);
      return 0;
    case Invocation::Action::kRun:
      break;
  }
  if (invocation.command == nullptr) return fail("missing command; see 'nodekeeper --help'");

  const std::string socket = CommandLine::socketPath(invocation.global, std::getenv("NODEKEEPER_SOCKET"));
  auto timeout = std::chrono::milliseconds(std::llround(invocation.global.timeout_s * 1000.0));
  // Channels connect on their first call, so the unused one costs nothing.
  NodeClient client(socket, timeout);
  AppsClient apps_client(socket, timeout);
  TasksClient tasks_client(socket, timeout);
  FaultsClient faults_client(socket, timeout);
  int code = dispatch(invocation, client, apps_client, tasks_client, faults_client);
  out_.flush();
  return code;
}

int CommandRunner::dispatch(const Invocation& invocation, NodeClient& client, AppsClient& apps_client,
                            TasksClient& tasks_client, FaultsClient& faults_client) {
  const bool for_app = invocation.options.has("app");
  switch (invocation.command->id) {
    case CommandId::kStatus: return status(invocation, client);
    case CommandId::kWatch: return watch(invocation, client);
    case CommandId::kFreqGet: return freqGet(invocation, client, false);
    case CommandId::kFreqSet: return freqSet(invocation, client);
    case CommandId::kGovernorGet: return freqGet(invocation, client, true);
    case CommandId::kGovernorSet: return governorSet(invocation, client);
    case CommandId::kPowerCapGet: return powerCapGet(invocation, client);
    case CommandId::kPowerCapSet:
    case CommandId::kPowerCapDisable: return powerCapSet(invocation, client);
    case CommandId::kPolicyGet: return for_app ? appPolicyGet(invocation, apps_client) : policyGet(invocation, client);
    case CommandId::kPolicySet: return for_app ? appPolicySet(invocation, apps_client) : policySet(invocation, client);
    case CommandId::kApps: return apps(invocation, apps_client);
    case CommandId::kBudget: return budget(invocation, apps_client);
    case CommandId::kTasks: return tasks(invocation, tasks_client);
    case CommandId::kTasksStats: return tasksStats(invocation, tasks_client);
    case CommandId::kExport: return exportSession(invocation, tasks_client);
    case CommandId::kGraph: return graph(invocation, tasks_client);
    case CommandId::kJobs: return jobs(invocation, faults_client);
    case CommandId::kJobBegin:
    case CommandId::kJobAttach:
    case CommandId::kJobEnd: {
      JobsClient jobs_client(CommandLine::socketPath(invocation.global, std::getenv("NODEKEEPER_SOCKET")),
                             std::chrono::milliseconds(std::llround(invocation.global.timeout_s * 1000.0)));
      return JobCommands::run(invocation, jobs_client, out_, err_);
    }
    case CommandId::kSymptoms: return symptoms(invocation, faults_client);
    case CommandId::kFaults: return faults(invocation, faults_client);
    case CommandId::kWhoAmI: return whoAmI(invocation, client);
    case CommandId::kDebug: {
      DebugSessionRunner runner(out_, err_, CommandLine::socketPath(invocation.global, std::getenv("NODEKEEPER_SOCKET")),
                                std::chrono::milliseconds(std::llround(invocation.global.timeout_s * 1000.0)),
                                invocation.global.json);
      return runner.run(invocation, tasks_client);
    }
    case CommandId::kUi:
      if (!ui_) return fail("ui: not built into this nodekeeper");
      return ui_(invocation, out_, err_);
  }
  return fail("command not implemented");
}

int CommandRunner::status(const Invocation& invocation, NodeClient& client) {
  auto topology = client.getTopology();
  if (!topology) return fail(topology.error().message);
  auto snapshot = client.getTelemetry(false);
  if (!snapshot) return fail(snapshot.error().message);
  // Right after the daemon starts its sampler may not have run yet.
  if (snapshot->timestamp_ns() == 0 && snapshot->cores().empty()) {
    snapshot = client.getTelemetry(true);
    if (!snapshot) return fail(snapshot.error().message);
  }
  if (invocation.global.json) out_ << StatusFormatter::json(*topology, *snapshot, true);
  else out_ << StatusFormatter::text(*topology, *snapshot);
  return 0;
}

int CommandRunner::watch(const Invocation& invocation, NodeClient& client) {
  auto settings = RequestBuilder::watch(invocation);
  if (!settings) return fail(settings.error().message);
  auto topology = client.getTopology();
  if (!topology) return fail(topology.error().message);

  InterruptWatcher interrupts;
  const bool json = invocation.global.json;
  const bool redraw = out_is_terminal_ && !json;
  uint64_t shown = 0;
  auto on_snapshot = [&](const pb::TelemetrySnapshot& snapshot) {
    if (json) {
      out_ << StatusFormatter::json(*topology, snapshot, false);
    } else if (redraw) {
      std::string frame = "Every " + intervalText(settings->interval_ms) + " from " + client.socketPath() +
                          "; Ctrl-C quits\n\n" + StatusFormatter::text(*topology, snapshot);
      out_ << redrawFrame(frame, shown == 0);
    } else {
      if (shown > 0) out_ << "\n";
      out_ << StatusFormatter::text(*topology, snapshot);
    }
    out_.flush();
    ++shown;
    // A closed pipe (watch | head) ends the watch quietly.
    if (!out_) return false;
    return settings->count == 0 || shown < settings->count;
  };
  Status streamed = client.streamTelemetry(settings->interval_ms, on_snapshot, interrupts.valid() ? &interrupts : nullptr);
  if (!streamed) return fail(streamed.error().message);
  return 0;
}

int CommandRunner::freqGet(const Invocation& invocation, NodeClient& client, bool governors_only) {
  auto cpus = RequestBuilder::cpuFilter(invocation);
  if (!cpus) return fail(cpus.error().message);
  auto policies = client.getFrequencyPolicies();
  if (!policies) return fail(policies.error().message);
  auto selected = ControlFormatter::selectPolicies(*policies, *cpus);
  if (!cpus->empty() && selected.policies().empty())
    return fail("no cpufreq policy covers CPUs " + formatCpuList(*cpus));
  if (invocation.global.json) out_ << ControlFormatter::policiesJson(selected);
  else out_ << (governors_only ? ControlFormatter::governorsText(selected) : ControlFormatter::policiesText(selected));
  return 0;
}

// What the daemon did, then the policies as they are now.
int CommandRunner::showFrequencyReply(const Invocation& invocation, const nodekeeper::v1::FrequencyPolicies& reply) {
  if (invocation.global.json) {
    out_ << ControlFormatter::frequencyReplyJson(reply);
    return 0;
  }
  if (!reply.message().empty()) out_ << reply.message() << "\n\n";
  out_ << ControlFormatter::policiesText(reply);
  return 0;
}

int CommandRunner::freqSet(const Invocation& invocation, NodeClient& client) {
  auto request = RequestBuilder::frequencyLimits(invocation);
  if (!request) return fail(request.error().message);
  auto reply = client.setFrequencyLimits(*request);
  if (!reply) return fail(reply.error().message);
  return showFrequencyReply(invocation, *reply);
}

int CommandRunner::governorSet(const Invocation& invocation, NodeClient& client) {
  auto request = RequestBuilder::governor(invocation);
  if (!request) return fail(request.error().message);
  auto reply = client.setGovernor(*request);
  if (!reply) return fail(reply.error().message);
  return showFrequencyReply(invocation, *reply);
}

int CommandRunner::powerCapGet(const Invocation& invocation, NodeClient& client) {
  auto caps = client.getPowerCaps();
  if (!caps) return fail(caps.error().message);
  if (invocation.global.json) out_ << ControlFormatter::powerCapsJson(*caps);
  else out_ << ControlFormatter::powerCapsText(*caps);
  return 0;
}

int CommandRunner::powerCapSet(const Invocation& invocation, NodeClient& client) {
  auto request = RequestBuilder::powerCap(invocation);
  if (!request) return fail(request.error().message);
  auto reply = client.setPowerCap(*request);
  if (!reply) return fail(reply.error().message);
  if (invocation.global.json) {
    out_ << ControlFormatter::powerCapReplyJson(*reply);
    return 0;
  }
  if (!reply->message().empty()) out_ << reply->message() << "\n\n";
  out_ << ControlFormatter::powerCapsText(*reply);
  return 0;
}

int CommandRunner::policyGet(const Invocation& invocation, NodeClient& client) {
  auto policy = client.getPolicy();
  if (!policy) return fail(policy.error().message);
  out_ << (invocation.global.json ? ControlFormatter::nodePolicyJson(*policy) : ControlFormatter::nodePolicyText(*policy));
  return 0;
}

int CommandRunner::policySet(const Invocation& invocation, NodeClient& client) {
  auto request = RequestBuilder::policy(invocation);
  if (!request) return fail(request.error().message);
  auto policy = client.setPolicy(*request);
  if (!policy) return fail(policy.error().message);
  out_ << (invocation.global.json ? ControlFormatter::nodePolicyJson(*policy) : ControlFormatter::nodePolicyText(*policy));
  return 0;
}

int CommandRunner::whoAmI(const Invocation& invocation, NodeClient& client) {
  auto identity = client.whoAmI();
  if (!identity) return fail(identity.error().message);
  auto user = userName(identity->uid());
  auto group = groupName(identity->gid());
  out_ << (invocation.global.json ? ControlFormatter::identityJson(*identity, user, group)
                                  : ControlFormatter::identityText(*identity, user, group));
  return 0;
}

int CommandRunner::apps(const Invocation& invocation, AppsClient& client) {
  const bool ended = invocation.options.has("ended");
  auto apps = client.listApps(ended);
  if (!apps) return fail(apps.error().message);
  if (invocation.global.json)
    out_ << AppsFormatter::appsJson(*apps);
  else
    out_ << (ended ? AppsFormatter::endedAppsText(*apps) : AppsFormatter::appsText(*apps));
  return 0;
}

int CommandRunner::tasks(const Invocation& invocation, TasksClient& client) {
  auto sessions = client.listSessions();
  if (!sessions) return fail(sessions.error().message);
  out_ << (invocation.global.json ? TasksFormatter::sessionsJson(*sessions) : TasksFormatter::sessionsText(*sessions));
  return 0;
}

int CommandRunner::jobs(const Invocation& invocation, FaultsClient& client) {
  const std::string job = invocation.options.value("job").value_or("");
  if (invocation.options.has("job") && job.empty()) return fail("jobs: --job needs a job id (see 'nodekeeper jobs')");
  auto jobs = client.listJobs(job);
  if (!jobs) return fail(jobs.error().message);
  if (!job.empty() && jobs->jobs().empty() && !invocation.global.json)
    return fail("jobs: no job '" + job + "' here (or not yours; see 'nodekeeper jobs')");
  out_ << (invocation.global.json ? FaultsFormatter::jobsJson(*jobs) : FaultsFormatter::jobsText(*jobs, wallClockNs()));
  return 0;
}

int CommandRunner::symptoms(const Invocation& invocation, FaultsClient& client) {
  const std::string job = invocation.options.value("job").value_or("");
  if (invocation.options.has("job") && job.empty())
    return fail("symptoms: --job needs a job id (see 'nodekeeper jobs')");
  const bool follow = invocation.options.has("watch");
  const bool json = invocation.global.json;
  // Only a watch turns Ctrl-C into a clean stop; a replay keeps the default.
  std::optional<InterruptWatcher> interrupts;
  if (follow) interrupts.emplace();
  std::vector<pb::Symptom> collected;
  uint64_t shown = 0;
  auto on_symptom = [&](const pb::Symptom& symptom) {
    if (json && !follow) {
      collected.push_back(symptom);
      return true;
    }
    out_ << (json ? FaultsFormatter::symptomJson(symptom) : FaultsFormatter::symptomLine(symptom));
    out_.flush();
    ++shown;
    // A closed pipe (symptoms --watch | head) ends the watch quietly.
    return static_cast<bool>(out_);
  };
  Status watched = client.watchSymptoms(job, follow, on_symptom,
                                        interrupts && interrupts->valid() ? &*interrupts : nullptr);
  if (!watched) return fail(watched.error().message);
  if (json && !follow) out_ << FaultsFormatter::symptomsJson(collected);
  else if (!json && !follow && shown == 0)
    out_ << "No symptoms" << (job.empty() ? std::string() : " of job " + job) << ".\n";
  return 0;
}

int CommandRunner::faults(const Invocation& invocation, FaultsClient& client) {
  const std::string job = invocation.options.value("job").value_or("");
  if (invocation.options.has("job") && job.empty()) return fail("faults: --job needs a job id (see 'nodekeeper jobs')");
  const bool follow = invocation.options.has("watch");
  const bool json = invocation.global.json;
  // Only a watch turns Ctrl-C into a clean stop; a listing keeps the default.
  std::optional<InterruptWatcher> interrupts;
  if (follow) interrupts.emplace();
  std::vector<pb::FaultReport> collected;
  auto on_fault = [&](const pb::FaultReport& fault) {
    if (!follow) {
      collected.push_back(fault);
      return true;
    }
    out_ << (json ? FaultsFormatter::faultJson(fault) : FaultsFormatter::faultLine(fault));
    out_.flush();
    // A closed pipe (faults --watch | head) ends the watch quietly.
    return static_cast<bool>(out_);
  };
  Status watched =
      client.watchFaults(job, follow, on_fault, interrupts && interrupts->valid() ? &*interrupts : nullptr);
  if (!watched) return fail(watched.error().message);
  if (!follow) out_ << (json ? FaultsFormatter::faultsJson(collected) : FaultsFormatter::faultsText(collected, job));
  return 0;
}

// SESSION as the daemon knows it (id or pid), or a recording's file (a
// path: it has a slash or ends in .nkrec), read here without a daemon. A
// damaged recording is used up to its last good frame, said on stderr.
Result<RecordedGraph> CommandRunner::recordedGraph(const Invocation& invocation, TasksClient& client,
                                                   std::string_view command) {
  const std::string& selector = invocation.positionals.at(0);
  Result<RecordedGraph> recorded = [&]() -> Result<RecordedGraph> {
    if (selector.find('/') != std::string::npos || selector.ends_with(".nkrec")) {
      auto loaded = RecordingLoader::load(selector);
      if (!loaded) return Error{loaded.error().code, std::string(command) + ": " + loaded.error().message};
      return loaded;
    }
    auto id = client.resolveSession(selector, command);
    if (!id) return id.error();
    return client.graph(*id);
  }();
  if (recorded && !recorded->damage.empty())
    err_ << "nodekeeper: warning: " << recorded->damage << "; using the " << recorded->graph.tasks().size()
         << " tasks recorded before it\n";
  return recorded;
}

int CommandRunner::tasksStats(const Invocation& invocation, TasksClient& client) {
  auto recorded = recordedGraph(invocation, client, "tasks stats");
  if (!recorded) return fail(recorded.error().message);
  out_ << (invocation.global.json ? TasksFormatter::statsJson(recorded->label, recorded->graph)
                                  : TasksFormatter::statsText(recorded->label, recorded->graph));
  return 0;
}

// Writes `text` to `path`, or to standard output for "-".
int CommandRunner::writeOutput(std::string_view command, const std::string& path, std::string_view text) {
  if (path == "-") {
    out_ << text;
    out_.flush();
    return out_ ? 0 : fail(std::string(command) + ": writing to standard output failed");
  }
  auto fd = openOutputFile(command, path);
  if (!fd) return fail(fd.error().message);
  __gnu_cxx::stdio_filebuf<char> buffer(*fd, std::ios::out | std::ios::binary);
  std::ostream file(&buffer);
  file << text;
  file.flush();
  if (!file || buffer.close() == nullptr) return fail(std::string(command) + ": writing " + path + " failed");
  return 0;
}

Result<std::string> CommandRunner::recordedEvents(const Invocation& invocation, TasksClient& client,
                                                  std::string_view command, std::string* label,
                                                  const std::function<void(std::span<const GraphEvent>)>& on_events) {
  const std::string& selector = invocation.positionals.at(0);
  if (selector.find('/') != std::string::npos || selector.ends_with(".nkrec")) {
    *label = selector;
    auto damage = RecordingLoader::forEachFrame(selector, on_events);
    if (!damage) return Error{damage.error().code, std::string(command) + ": " + damage.error().message};
    return damage;
  }
  auto id = client.resolveSession(selector, command);
  if (!id) return id.error();
  *label = "session " + std::to_string(*id);
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  Status watched = client.watch(*id, [&](const nodekeeper::v1::TaskEventBatch& batch) {
    (void)translator.toGraphEvents(batch, events);  // the daemon checked the batch before recording it
    on_events(events);
    return true;
  });
  if (!watched && watched.error().code != ErrorCode::kDataLoss) return watched.error();
  return watched ? std::string() : watched.error().message;
}

int CommandRunner::exportSession(const Invocation& invocation, TasksClient& client) {
  const std::string format = invocation.options.value("format").value_or("perfetto");
  if (format != "perfetto" && format != "json" && format != "dot" && format != "otf2")
    return fail("export: --format is perfetto, json, otf2 or dot, not '" + format + "'");
  auto path = invocation.options.value("out");
  if (!path || path->empty()) return fail("export: --out PATH is required (- for standard output)");
  if (format == "otf2" && *path == "-") return fail("export: an OTF2 archive is a directory; --out cannot be -");
  if (format == "perfetto" || format == "otf2") return exportStreamed(invocation, client, format, *path);
  if (invocation.options.has("from") || invocation.options.has("to"))
    return fail("export: --from and --to select runs of a trace (--format perfetto or otf2), not of a " + format +
                " graph");
  auto recorded = recordedGraph(invocation, client, "export");
  if (!recorded) return fail(recorded.error().message);
  const TaskGraph* graph = &recorded->graph;
  // The JSON form holds every event as text: past about a million tasks
  // (some 120 MB) ui.perfetto.dev opens it slowly or not at all.
  constexpr size_t kLargeJson = 1'000'000;
  if (format == "json" && graph->tasks().size() > kLargeJson)
    err_ << "nodekeeper: warning: " << graph->tasks().size()
         << " tasks make a large JSON trace that ui.perfetto.dev may not open; --format perfetto writes Perfetto's "
            "protobuf trace, smaller and streamed\n";
  // Streamed: a million-task trace is never held as text.
  std::optional<__gnu_cxx::stdio_filebuf<char>> buffer;
  std::ostream file(nullptr);
  if (*path != "-") {
    auto fd = openOutputFile("export", *path);
    if (!fd) return fail(fd.error().message);
    buffer.emplace(*fd, std::ios::out | std::ios::binary);
    file.rdbuf(&*buffer);
  }
  std::ostream& out = *path == "-" ? out_ : file;
  if (format == "json") GraphExporter::perfettoJson(*graph, out);
  else GraphExporter::dot(*graph, out);
  out.flush();
  if (!out || (buffer && buffer->close() == nullptr)) return fail("export: writing " + *path + " failed");
  if (*path != "-")
    err_ << "nodekeeper: " << recorded->label << ": " << graph->tasks().size() << " tasks, " << graph->edges().size()
         << " edges written to " << *path << "\n";
  return 0;
}

// Perfetto's protobuf trace and OTF2, written as the events are read:
// memory follows the session's open tasks, not its length.
int CommandRunner::exportStreamed(const Invocation& invocation, TasksClient& client, const std::string& format,
                                  const std::string& path) {
  auto from = invocation.options.value("from");
  auto to = invocation.options.value("to");
  auto window = ExportWindow::parse(from ? std::optional<std::string_view>(*from) : std::nullopt,
                                    to ? std::optional<std::string_view>(*to) : std::nullopt);
  if (!window) return fail("export: " + window.error().message);

  std::unique_ptr<Otf2Exporter> otf2;
  std::optional<__gnu_cxx::stdio_filebuf<char>> buffer;
  std::ostream file(nullptr);
  std::ostream& out = path == "-" ? out_ : file;
  std::optional<PerfettoTraceWriter> perfetto;
  std::string label;
  if (format == "otf2") {
    std::filesystem::path dir(path);
    std::error_code ec;
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(dir, ec)))
      return fail("export: " + path + " is a symlink; refusing to write through it (remove the link or choose another --out)");
    std::filesystem::create_directory(dir, ec);  // an existing one is fine unless it holds an archive
    if (ec) return fail("export: cannot make the directory " + path + ": " + ec.message());
    auto opened = Otf2Exporter::open(dir, "traces");
    if (!opened) return fail("export: " + opened.error().message);
    otf2 = std::move(*opened);
  } else if (path != "-") {
    auto fd = openOutputFile("export", path);
    if (!fd) return fail(fd.error().message);
    buffer.emplace(*fd, std::ios::out | std::ios::binary);
    file.rdbuf(&*buffer);
  }
  // The process track is named when the first event arrives, after the
  // source (and so the label) is known.
  std::optional<TaskRunTracker> tracker;
  auto damage = recordedEvents(invocation, client, "export", &label, [&](std::span<const GraphEvent> events) {
    if (!tracker) {
      TaskRunSink* sink = otf2.get();
      if (!otf2) sink = &perfetto.emplace(out, label);
      tracker.emplace(*sink, *window);
    }
    tracker->apply(events);
  });
  if (!damage) return fail(damage.error().message);
  if (!damage->empty()) err_ << "nodekeeper: warning: " << *damage << "; using the events recorded before it\n";
  if (tracker) tracker->finish();
  if (otf2) {
    Status closed = otf2->close(tracker ? tracker->lastNs() : 0);
    if (!closed) return fail("export: " + closed.error().message);
  } else {
    out.flush();
    if (!out || (buffer && buffer->close() == nullptr)) return fail("export: writing " + path + " failed");
  }
  if (path != "-") {
    const TaskRunTracker::Counts counts = tracker ? tracker->counts() : TaskRunTracker::Counts{};
    err_ << "nodekeeper: " << label << ": " << counts.tasks << " tasks, " << counts.dependences
         << " edges written to " << path << (format == "otf2" ? "/traces.otf2" : "") << " (" << counts.runs
         << " task runs" << (window->from_ns || window->to_ns ? " in the window" : "") << ")\n";
  }
  return 0;
}

int CommandRunner::graph(const Invocation& invocation, TasksClient& client) {
  std::string format = invocation.options.value("format").value_or("svg");
  if (format != "svg" && format != "dot") return fail("graph: --format is svg or dot, not '" + format + "'");
  std::string path = invocation.options.value("out").value_or("-");
  if (path.empty()) return fail("graph: --out needs a path (or - for standard output)");
  if (invocation.options.has("watch")) return graphWatch(invocation, client, format, path);
  auto recorded = recordedGraph(invocation, client, "graph");
  if (!recorded) return fail(recorded.error().message);
  std::ostringstream dot;
  GraphExporter::dot(recorded->graph, dot);
  if (format == "dot") return writeOutput("graph", path, dot.str());
  auto svg = GraphvizRenderer::toSvg(dot.str());
  if (!svg) return fail("graph: " + svg.error().message);
  return writeOutput("graph", path, *svg);
}

// `graph --watch`: only a live session grows, and only a file can be
// redrawn; GraphWatcher does the following.
int CommandRunner::graphWatch(const Invocation& invocation, TasksClient& client, const std::string& format,
                              const std::string& path) {
  const std::string& selector = invocation.positionals.at(0);
  if (selector.find('/') != std::string::npos || selector.ends_with(".nkrec"))
    return fail("graph: --watch follows a live session; a recording's file cannot grow (leave out --watch)");
  if (path == "-")
    return fail("graph: --watch needs --out FILE: it rewrites FILE as the graph grows, which standard output cannot "
                "take");
  auto session = client.resolveSession(selector, "graph");
  if (!session) return fail(session.error().message);

  const std::string socket = CommandLine::socketPath(invocation.global, std::getenv("NODEKEEPER_SOCKET"));
  const auto timeout = std::chrono::milliseconds(std::llround(invocation.global.timeout_s * 1000.0));
  GraphWatcher watcher({.format = format, .path = path, .json = invocation.global.json}, out_, err_);
  Status followed = watcher.follow(socket, timeout, *session);
  if (!followed) return fail(followed.error().message);
  return 0;
}

int CommandRunner::budget(const Invocation& invocation, AppsClient& client) {
  auto selector = RequestBuilder::appSelector(invocation);
  if (!selector) return fail(selector.error().message);
  auto milliwatts = RequestBuilder::powerBudgetMilliwatts(invocation);
  if (!milliwatts) return fail(milliwatts.error().message);
  auto app = findApp(*selector, client);
  if (!app) return fail(app.error().message);
  pb::SetPowerBudgetRequest request;
  request.set_app_id(app->app_id());
  request.set_power_budget_mw(*milliwatts);
  auto updated = client.setPowerBudget(request);
  if (!updated) return fail(updated.error().message);
  out_ << (invocation.global.json ? AppsFormatter::appJson(*updated) : AppsFormatter::appText(*updated));
  return 0;
}

int CommandRunner::appPolicyGet(const Invocation& invocation, AppsClient& client) {
  auto selector = RequestBuilder::appSelector(invocation);
  if (!selector) return fail(selector.error().message);
  auto app = findApp(*selector, client);
  if (!app) return fail(app.error().message);
  out_ << (invocation.global.json ? AppsFormatter::appPolicyJson(*app) : AppsFormatter::appPolicyText(*app));
  return 0;
}

int CommandRunner::appPolicySet(const Invocation& invocation, AppsClient& client) {
  auto selector = RequestBuilder::appSelector(invocation);
  if (!selector) return fail(selector.error().message);
  auto name = RequestBuilder::appPolicyName(invocation);
  if (!name) return fail(name.error().message);
  auto app = findApp(*selector, client);
  if (!app) return fail(app.error().message);
  pb::SetAppPolicyRequest request;
  request.set_app_id(app->app_id());
  request.set_policy(*name);
  auto updated = client.setAppPolicy(request);
  if (!updated) return fail(updated.error().message);
  out_ << (invocation.global.json ? AppsFormatter::appPolicyJson(*updated) : AppsFormatter::appPolicyText(*updated));
  return 0;
}

}  // namespace nk::cli
