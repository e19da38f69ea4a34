#include "cli/command_table.h"

#include <algorithm>

#include "cli/debug_command_parser.h"

namespace nk::cli {

namespace {

const char kDefaultSocketHelp[] =
    "daemon socket (default: $NODEKEEPER_SOCKET, else /run/nodekeeper/nodekeeperd.sock)";

OptionSpec cpuOption(const std::string& what) {
  return {"cpu", 0, true, "LIST", "logical CPUs to " + what + ", e.g. 0-3,8 (default: all)"};
}

OptionSpec packageOption(const std::string& what) {
  return {"package", 0, true, "LIST", "packages to " + what + ", e.g. 0 or 0-1 (default: all)"};
}

OptionSpec appOption(const std::string& verb) {
  return {"app", 0, true, "APP", verb + " APP's policy instead of the node's (its id or pid, see 'nodekeeper apps')"};
}

std::string optionLabel(const OptionSpec& option) {
  std::string label = option.short_name ? std::string("-") + option.short_name + ", " : std::string();
  label += "--" + option.name;
  if (option.takes_value) label += " " + option.value_name;
  return label;
}

// Two-column "label  text" lines with the text aligned.
std::string optionLines(const std::vector<OptionSpec>& options) {
  size_t width = 0;
  for (const auto& option : options) width = std::max(width, optionLabel(option).size());
  std::string out;
  for (const auto& option : options) {
    std::string label = optionLabel(option);
    out += "  " + label + std::string(width - label.size() + 2, ' ') + option.help + "\n";
  }
  return out;
}

std::string usageLine(const CommandSpec& command) {
  std::string line = "usage: nodekeeper [OPTIONS] " + command.name();
  for (const auto& positional : command.positionals) line += " " + positional;
  for (const auto& option : command.options) {
    line += " [--" + option.name;
    if (option.takes_value) line += " " + option.value_name;
    line += "]";
  }
  return line + "\n";
}

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

bool startsWith(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

const char kUnitsNote[] =
    "Frequencies need a unit: 1.8GHz, 1800MHz, 1800000kHz (a plain number is refused).\n"
    "Power takes a unit: 45W, 45.5W, 45000mW (a plain number is W). CPU and package\n"
    "lists look like 0-3,8,10-11.\n";

}  // namespace

std::string CommandSpec::name() const { return join(path, " "); }

const CommandTable& CommandTable::instance() {
  static const CommandTable table;
  return table;
}

CommandTable::CommandTable() {
  global_options_ = {
      {"socket", 0, true, "PATH", kDefaultSocketHelp},
      {"json", 0, false, "", "print JSON instead of tables (NDJSON for watch)"},
      {"timeout", 0, true, "SECONDS", "deadline for each call to the daemon (default 5)"},
      {"help", 'h', false, "", "show help; after a command, help for that command"},
      {"version", 0, false, "", "print the version and exit"},
  };

  commands_ = {
      {CommandId::kStatus, {"status"}, {}, {},
       "node topology, then frequency, temperature and power per core and package",
       "Shows the node (hostname, CPU model, emulated profile, packages, cores, PUs),\n"
       "one row per core (frequency, limits, governor, temperature, utilisation) and\n"
       "per package (power, energy, power cap, temperature), and the node's total power.\n"},
      {CommandId::kWatch, {"watch"}, {},
       {{"interval", 0, true, "SECONDS", "time between snapshots (default 1, at least 0.01)"},
        {"count", 0, true, "N", "stop after N snapshots (default: until Ctrl-C)"}},
       "the status view, refreshed live from the daemon's telemetry stream",
       "Redraws the status view on every snapshot when stdout is a terminal; otherwise\n"
       "prints each snapshot followed by a blank line. With --json, prints one JSON\n"
       "object per line (NDJSON). Ctrl-C stops.\n"},
      {CommandId::kFreqGet, {"freq", "get"}, {}, {cpuOption("show")},
       "cpufreq policies: governor, current frequency, limits, hardware range",
       "Lists the cpufreq policies covering the selected CPUs: CPUs, driver, governor,\n"
       "current, minimum and maximum frequency, hardware range, the userspace setspeed\n"
       "and the number of available frequencies.\n"},
      {CommandId::kFreqSet, {"freq", "set"}, {},
       {cpuOption("change"),
        {"min", 0, true, "FREQ", "lowest frequency the governor may choose"},
        {"max", 0, true, "FREQ", "highest frequency the governor may choose"},
        {"speed", 0, true, "FREQ",
         "fixed frequency (userspace governor; under intel_pstate min = max = FREQ)"}},
       "set frequency limits or a fixed speed (admin)",
       "Sets scaling_min_freq/scaling_max_freq, or a fixed speed, on the policies of the\n"
       "selected CPUs. Give at least one of --min, --max, --speed. Needs the admin role\n"
       "(root or group nodekeeper).\n"},
      {CommandId::kGovernorGet, {"governor", "get"}, {}, {cpuOption("show")},
       "the cpufreq governor of each policy and the ones available",
       "Lists the governor of each cpufreq policy and the governors it offers.\n"},
      {CommandId::kGovernorSet, {"governor", "set"}, {"NAME"}, {cpuOption("change")},
       "set the cpufreq governor (admin)",
       "Sets the cpufreq governor (e.g. performance, powersave, ondemand, schedutil,\n"
       "userspace) on the policies of the selected CPUs. Needs the admin role.\n"},
      {CommandId::kPowerCapGet, {"power", "cap", "get"}, {}, {},
       "RAPL package power caps",
       "Lists the RAPL power cap (long-term constraint) of each package.\n"},
      {CommandId::kPowerCapSet, {"power", "cap", "set"}, {"LIMIT"}, {packageOption("cap")},
       "set and enable a package power cap, e.g. 45W (admin)",
       "Sets the RAPL power limit of the selected packages to LIMIT (e.g. 45W or\n"
       "45000mW) and enables it. Needs the admin role.\n"},
      {CommandId::kPowerCapDisable, {"power", "cap", "disable"}, {}, {packageOption("uncap")},
       "turn package power caps off (admin)",
       "Disables the RAPL power limit of the selected packages. Needs the admin role.\n"},
      {CommandId::kPolicyGet, {"policy", "get"}, {}, {appOption("show")},
       "the node's energy policy and the ones available, or an app's",
       "Shows the energy policy the daemon runs (performance, powersave, ondemand,\n"
       "thermal-aware, ...) and the available ones. With --app, shows the app's own\n"
       "policy, or \"(node default)\" and the node policy it follows.\n"},
      {CommandId::kPolicySet, {"policy", "set"}, {"NAME"}, {appOption("set")},
       "select the node's energy policy (admin), or an app's (its owner)",
       "Selects the node's energy policy. Needs the admin role. With --app, selects the\n"
       "policy of that app only; NAME \"default\" hands it back to the node's policy.\n"
       "Needs the app's owner or the admin role.\n"},
      {CommandId::kApps, {"apps"}, {},
       {{"ended", 0, false, "", "the apps that ended, with their energy, instead of the running ones"}},
       "the apps registered for energy management, with their threads and energy",
       "Lists the applications that registered with the daemon through libnodekeeper:\n"
       "id, pid, name, the policy that drives them, D (threads the daemon lets the app\n"
       "run / its maximum), power budget (with the effective budget the energy manager\n"
       "holds it to, where that differs), measured power, the energy (J, kJ) the node's\n"
       "packages spent on it so far, and under each app one line per thread: tid,\n"
       "OpenMP thread number, the node core it is placed on and the host CPUs it is\n"
       "pinned to. Each package's energy is split over the apps by their CPU time on its\n"
       "cores; other processes' share stays unattributed (the last line sums it up).\n"
       "With --ended, the apps that ended (the last 256): id, pid, uid, name, job,\n"
       "start, end, how it ended (unregistered at its exit, or gone) and its energy.\n"},
      {CommandId::kBudget, {"budget"}, {"APP", "WATTS"}, {},
       "set an app's power budget, e.g. 'budget 3 40W' (its owner or admin)",
       "Sets the power budget of APP (its id or pid, see 'nodekeeper apps') to WATTS,\n"
       "e.g. 40W, 12.5W, 12000mW or 12 (watts). The budget must be positive and at\n"
       "most the node's power cap. Needs the app's owner or the admin role. Prints the\n"
       "app as it is now.\n"},
      {CommandId::kTasks, {"tasks"}, {}, {},
       "the task sessions the daemon recorded (programs run with NODEKEEPER_TASKS)",
       "Lists the task-event sessions: one per program that streamed its OpenMP task\n"
       "events to the daemon (NODEKEEPER_TASKS=lossless or lossy, with libnodekeeper as\n"
       "its OMPT tool): session id, pid, uid, the number of tasks in its graph and its\n"
       "command line. You see your own sessions; the admin sees all. Recordings are\n"
       "kept under the daemon's state directory, in recordings/.\n"},
      {CommandId::kTasksStats, {"tasks", "stats"}, {"SESSION"}, {},
       "task run times per function in a task session",
       "Shows task session SESSION (its id or pid, see 'nodekeeper tasks') as recorded\n"
       "so far: its tasks by state (not_queued, queued, running, finished) and, per\n"
       "task function, the number of finished runs and their total, mean, shortest and\n"
       "longest run time, longest total first. Needs the session's owner or the admin\n"
       "role.\n"
       "SESSION may also be a recording's file (a path, e.g. STATE_DIR/recordings/\n"
       "session-1-pid42.nkrec), read without the daemon; a damaged one is read up to\n"
       "its last good frame, with a warning.\n"},
      {CommandId::kExport, {"export"}, {"SESSION"},
       {{"format", 0, true, "FORMAT", "perfetto (default: Perfetto's protobuf trace), json (trace-event JSON), otf2 or dot (Graphviz)"},
        {"out", 0, true, "PATH", "file to write (- for standard output); for otf2 a new directory"},
        {"from", 0, true, "TIME", "perfetto, otf2: only task runs that end at or after TIME into the session (e.g. 1.5s, 200ms)"},
        {"to", 0, true, "TIME", "perfetto, otf2: only task runs that start at or before TIME into the session"}},
       "write a task session as a Perfetto or OTF2 trace, or a Graphviz graph",
       "Writes task session SESSION (its id or pid, see 'nodekeeper tasks') as it was\n"
       "recorded so far. --format perfetto (the default): Perfetto's protobuf trace\n"
       "(open it in ui.perfetto.dev or trace_processor), a track per thread, a slice\n"
       "per task run named by its function, with its task id and parent as arguments,\n"
       "and a flow arrow per dependence whose predecessor was still open when the\n"
       "dependence was made (OpenMP's usual case). --format otf2: an OTF2 archive in the\n"
       "new directory PATH (PATH/traces.otf2; read it with otf2-print, Vampir or\n"
       "Score-P's tools), a region per task function, an enter and a leave per task run\n"
       "on its thread. Both are written as the events are read, in memory that follows\n"
       "the session's open tasks, not its length; --from and --to (times from the\n"
       "session's first event, in s, ms, us or ns) keep the task runs that overlap\n"
       "that window. --format json: Chrome/Perfetto trace-event JSON, the whole graph\n"
       "at once, for small sessions (a warning past a million tasks). --format dot:\n"
       "Graphviz, fill colour by function, border by state, one arrow per dependent\n"
       "pair labelled with its addresses. Needs the session's owner or the admin role.\n"
       "SESSION may also be a recording's file (a path, e.g. STATE_DIR/recordings/\n"
       "session-1-pid42.nkrec), read without the daemon; a damaged one is read up to\n"
       "its last good frame, with a warning.\n"},
      {CommandId::kGraph, {"graph"}, {"SESSION"},
       {{"format", 0, true, "FORMAT", "svg (default; needs Graphviz's dot) or dot"},
        {"out", 0, true, "PATH", "file to write (default: standard output)"},
        {"watch", 0, false, "", "follow the live session, rewriting PATH as the graph grows, until it ends or Ctrl-C"}},
       "draw a task session's dependency graph as SVG or DOT",
       "Draws the task graph of session SESSION (its id or pid, see 'nodekeeper tasks')\n"
       "as recorded so far, as the Temanejo paper's Figure 2 does: a node per task,\n"
       "filled by function, its border coloured by state (grey: not queued, amber:\n"
       "queued, green: running, black: finished; dashed: failed), an edge per\n"
       "dependence labelled with its address. --format svg renders through\n"
       "Graphviz's dot (package graphviz).\n"
       "With --watch (and --out PATH, not standard output) it follows the live session\n"
       "and redraws PATH as the graph grows, at most every 0.5 s and once more when the\n"
       "session ends, until then or Ctrl-C; each redraw replaces PATH whole (written to\n"
       "PATH.tmp, then renamed) and prints 'graph: N tasks, M edges -> PATH' on stderr\n"
       "(with --json, a JSON object on stdout). A recording's file cannot be watched.\n"
       "Needs the session's owner or the admin role.\n"
       "SESSION may also be a recording's file (a path, e.g. STATE_DIR/recordings/\n"
       "session-1-pid42.nkrec), read without the daemon; a damaged one is read up to\n"
       "its last good frame, with a warning.\n"},
      {CommandId::kJobs, {"jobs"}, {}, {{"job", 0, true, "JOB", "only job JOB"}},
       "the jobs known here (MPI ranks, Slurm), with their program, end and energy",
       "Lists the jobs whose processes registered with this daemon (MPI ranks through\n"
       "the PMPI agent, Slurm jobs through the SPANK plugin): job id, uid, size, its\n"
       "program (of its first process here), start and end (local time), how it ended\n"
       "(running, completed, failed, cancelled, aborted, unknown, with the detail), the\n"
       "energy its apps on this node used (J, kJ; kept after it ends), the job's nodes\n"
       "(as its ranks gave them), and under each job one line per rank of this node:\n"
       "rank, node, pid, its process's state (running, sleeping, stopped, zombie, gone)\n"
       "and how long ago it last reported progress (the agent reports a few times a\n"
       "second; a rank that stopped reporting is stuck or dead). --job JOB shows one.\n"
       "You see your own jobs; the admin sees all. Ended jobs stay listed, their ranks\n"
       "gone, until newer jobs need the room.\n"},
      {CommandId::kJobBegin, {"job", "begin"}, {},
       {{"job", 0, true, "ID", "the scheduler's job id (required)"},
        {"uid", 0, true, "UID", "the job's owner (required)"},
        {"nodes", 0, true, "LIST", "the job's nodes by host name, comma separated"},
        {"peer-port", 0, true, "PORT", "each node's daemon answers its peers at HOST:PORT"},
        {"budget", 0, true, "WATTS", "the job's power budget on this node, e.g. 40W"},
        {"policy", 0, true, "NAME", "the energy policy of the job's apps"},
        {"tasks", 0, true, "MODE", "task recording of its programs: lossless or lossy"},
        {"debug", 0, false, "", "its programs wait for a debugger frontend"},
        {"program", 0, true, "NAME", "its program's name"},
        {"step-pid", 0, true, "PID", "the step's process: it and its descendants (the tasks) are the job's"}},
       "tell the daemon a scheduler's job starts here (admin; the Slurm plugin)",
       "Tells the daemon that a job starts on this node: its owner, nodes and what it\n"
       "asked for (srun --nk-*). Its apps that register without a budget or policy of\n"
       "their own get the job's policy and a share of its budget (split equally\n"
       "among the job's apps here). Again for the same job (another step) replaces\n"
       "its settings. With --step-pid, the step's process and its descendants are\n"
       "the job's, as with 'job attach'. Needs the admin role: the Slurm plugin runs\n"
       "it as root. Prints the job.\n"},
      {CommandId::kJobAttach, {"job", "attach"}, {},
       {{"job", 0, true, "ID", "the job (required)"}, {"pid", 0, true, "PID", "a task's process (required)"}},
       "attach a task's process to a job (admin; the Slurm plugin)",
       "Makes PID and its descendants processes of job ID (begun with 'job begin'),\n"
       "so that an app among them gets the job's terms. Needs the admin role.\n"},
      {CommandId::kJobEnd, {"job", "end"}, {},
       {{"job", 0, true, "ID", "the job (required)"},
        {"end", 0, true, "HOW", "completed, failed, cancelled, aborted or unknown (required)"},
        {"detail", 0, true, "TEXT", "how, in a person's words, e.g. 'exit 2'"}},
       "tell the daemon how a job ended and print its energy (admin; the Slurm plugin)",
       "Records how job ID ended, unless its end is known already (the first to know\n"
       "tells it), and prints the job with the energy this node's packages spent on it\n"
       "(energy_j with --json). Needs the admin role.\n"},
      {CommandId::kSymptoms, {"symptoms"}, {},
       {{"job", 0, true, "JOB", "only the symptoms of job JOB"},
        {"watch", 0, false, "", "then print new symptoms as they arrive, until Ctrl-C"}},
       "fault symptoms MPI ranks reported (timeouts, MPI errors) and the suspects",
       "Prints the fault symptoms this daemon received from the PMPI agents of its\n"
       "ranks, oldest first, one line each: time, job, kind (response_timeout,\n"
       "mpi_error, ...), the reporting rank@node, the suspect ranks@node, the MPI\n"
       "operation (with the communicator and collective number for collectives), how\n"
       "long the call had waited, and the detail. For a collective that timed out, the\n"
       "daemon names as suspects the members that had not entered it, asking the\n"
       "daemons of the job's other nodes how far their ranks got; the detail says why\n"
       "each is suspected. With --watch, keeps printing new symptoms until Ctrl-C\n"
       "(with --json, one JSON object per line). You see your own jobs' symptoms; the\n"
       "admin sees all. The daemon keeps the last 10000.\n"},
      {CommandId::kFaults, {"faults"}, {},
       {{"job", 0, true, "JOB", "only the faults of job JOB"},
        {"watch", 0, false, "", "then print new faults as they are localised, until Ctrl-C"}},
       "faults localised in MPI jobs (node down, hang, crash, ...) by their fault trees",
       "Lists the faults this daemon published as the root of its jobs' fault\n"
       "localisation trees, oldest first. The root of a job's tree is the daemon of the\n"
       "node of rank 0; if that node fails, the next node of the tree takes over as\n"
       "root, so ask the daemon of rank 0's node, or of the node after it if rank 0's\n"
       "node is the one that failed. A fault is published once the daemons have\n"
       "confirmed a group of symptoms by probing the suspect node. Its kind is one of:\n"
       "  node_down         its daemon does not answer: the node is down or cut off\n"
       "  process_hang      a rank's process is there but stopped or not progressing\n"
       "  process_crash     a rank's process ended without MPI_Finalize\n"
       "  network_degraded  the node answers, but slowly or losing messages\n"
       "  overheating       the node's sensors are at or above their alarm temperature\n"
       "One row per fault: ID, JOB, KIND, NODE, RANKS (the ranks it hit, e.g. 0-3,7),\n"
       "AFTER (the time from the first symptom of the fault to its localisation, in\n"
       "seconds), BY (the node whose daemon localised it) and EVIDENCE (its first line;\n"
       "--json gives every line, and the times in ns). With --watch, prints the faults\n"
       "so far, then new ones as they are localised, one line each, until Ctrl-C (with\n"
       "--json, one JSON object per line). You see your own jobs' faults; the admin\n"
       "sees all.\n"},
      {CommandId::kDebug, {"debug"}, {"SESSION"},
       {{"batch", 0, true, "FILE", "read the commands from FILE (- for standard input), print one JSON object each"},
        {"break-at-start", 0, false, "", "with -- PROGRAM: hold it before its first task"},
        {"grace", 0, true, "SECONDS", "how long a break outlives this frontend if it goes (default: the daemon's, 30)"},
        {"program-output", 0, true, "FILE", "with -- PROGRAM: its stdout and stderr go to FILE"}},
       "steer a task program: break, step, block, prioritise tasks, attach gdb",
       "Attaches a debug console to task session SESSION (its id or pid, see 'nodekeeper\n"
       "tasks'), or, as 'nodekeeper debug [--break-at-start] -- PROGRAM [ARGS]', starts\n"
       "PROGRAM with libnodekeeper as its OpenMP tool and task events on, and attaches\n"
       "to it (with --break-at-start no task starts until you say so). The console takes\n"
       "the commands below, typed (with history and completion) or from --batch FILE,\n"
       "which prints one JSON object per command and exits 1 if any failed. On quit (or\n"
       "the end of the batch) a program it started is let run to its end. The output\n"
       "of a program it started goes to --program-output FILE if given; else, with\n"
       "--batch or --json, to standard error, each line prefixed 'program: ', so that\n"
       "standard output holds only the JSON lines. When the commands come from\n"
       "standard input, the program's standard input is /dev/null.\n"
       "Several frontends may attach to one program at once. A break this console holds\n"
       "outlives it by the grace period if it disconnects, then lifts.\n"
       "Needs the session's owner or the admin role.\n"
       "SESSION may also be a recording's file or an ended session: then the console\n"
       "replays it, with no control: 'next [N]' events at a time, 'until finished N',\n"
       "'until task ID started|finished', 'goto K', 'status' ('help' there lists them).\n\n" +
           std::string(DebugCommandParser::helpText()),
       true},
      {CommandId::kUi, {"ui"}, {},
       {{"port", 0, true, "N", "the port to listen on (default 0: any free one)"},
        {"no-browser", 0, false, "", "accepted for scripts; the page is never opened for you"}},
       "serve a web page of your task sessions and the node, on 127.0.0.1",
       "Serves a web page on 127.0.0.1:PORT only (no other address, no file from disk):\n"
       "your task sessions, live and recorded, drawn as their graphs grow, with the\n"
       "debug console's controls (break, step, block, priority, ...), each thread's\n"
       "timeline, and beside them the node's per-core frequency, temperature and\n"
       "utilisation and its power against the budget and cap; MPI jobs and their\n"
       "faults. Prints the page's URL, http://127.0.0.1:PORT/?token=TOKEN (with\n"
       "--json: {\"url\": ...}), and serves until Ctrl-C or SIGTERM.\n"
       "TOKEN is 32 random bytes made for this run: whoever has the URL acts as you\n"
       "(the page talks to the daemon as you, and sees and steers what you may), so\n"
       "do not share it. The first visit trades it for a cookie; every other request\n"
       "without it is refused, and so is one naming another host (DNS rebinding) or a\n"
       "post from another origin. Other users on the node reach the port but not the\n"
       "page. From another machine: ssh -L PORT:127.0.0.1:PORT NODE, then open the URL.\n"
       "A port in use is an error (exit 1).\n"},
      {CommandId::kWhoAmI, {"whoami"}, {}, {},
       "your identity and role as the daemon sees them",
       "Shows the pid, uid, gid and role (anyone, owner, admin) the daemon derives from\n"
       "the socket's peer credentials.\n"},
  };
}

const CommandSpec* CommandTable::find(const std::vector<std::string>& path) const {
  for (const auto& command : commands_)
    if (command.path == path) return &command;
  return nullptr;
}

bool CommandTable::isGroup(const std::vector<std::string>& prefix) const {
  return std::any_of(commands_.begin(), commands_.end(), [&](const CommandSpec& command) {
    return command.path.size() > prefix.size() && startsWith(command.path, prefix);
  });
}

std::vector<std::string> CommandTable::nextWords(const std::vector<std::string>& prefix) const {
  std::vector<std::string> words;
  for (const auto& command : commands_) {
    if (command.path.size() <= prefix.size() || !startsWith(command.path, prefix)) continue;
    const std::string& word = command.path[prefix.size()];
    if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
  }
  return words;
}

std::string CommandTable::mainHelp() const {
  std::string out = "usage: nodekeeper [OPTIONS] COMMAND [ARGS]\n\n"
                    "Monitors and controls this node's CPU frequency, power caps and energy\n"
                    "policy, and the power budgets of the apps it manages, through nodekeeperd.\n\n"
                    "Commands:\n";
  size_t width = 0;
  for (const auto& command : commands_) width = std::max(width, command.name().size());
  for (const auto& command : commands_)
    out += "  " + command.name() + std::string(width - command.name().size() + 2, ' ') + command.summary + "\n";
  out += "\nOptions (also accepted after the command):\n" + optionLines(global_options_);
  out += "\n" + std::string(kUnitsNote);
  out += "Run 'nodekeeper COMMAND --help' for a command's options.\n";
  return out;
}

std::string CommandTable::groupHelp(const std::vector<std::string>& prefix) const {
  std::string group = join(prefix, " ");
  std::string out = "usage: nodekeeper [OPTIONS] " + group + " SUBCOMMAND [ARGS]\n\nSubcommands:\n";
  size_t width = 0;
  for (const auto& command : commands_)
    if (startsWith(command.path, prefix)) width = std::max(width, command.name().size());
  for (const auto& command : commands_) {
    if (!startsWith(command.path, prefix)) continue;
    out += "  " + command.name() + std::string(width - command.name().size() + 2, ' ') + command.summary + "\n";
  }
  out += "\nRun 'nodekeeper " + group + " SUBCOMMAND --help' for its options.\n";
  return out;
}

std::string CommandTable::commandHelp(const CommandSpec& command) const {
  std::string out = usageLine(command) + "\n" + command.description;
  if (!command.options.empty()) out += "\nOptions:\n" + optionLines(command.options);
  out += "\nGlobal options:\n" + optionLines(global_options_);
  // Only where a frequency, power or list is typed in.
  bool takes_units = command.id == CommandId::kPowerCapSet || command.id == CommandId::kBudget;
  for (const auto& option : command.options)
    takes_units = takes_units || option.value_name == "LIST" || option.value_name == "FREQ";
  if (takes_units) out += "\n" + std::string(kUnitsNote);
  return out;
}

}  // namespace nk::cli
