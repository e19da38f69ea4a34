#include "cli/debug_session_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>
#include <utility>

#include "taskgraph/task_event_translator.h"
#include "cli/debug_client.h"
#include "cli/debug_console.h"
#include "cli/gdb_attacher.h"
#include "cli/line_editor.h"
#include "cli/recording_loader.h"
#include "cli/replay_console.h"

namespace v1 = nodekeeper::v1;

namespace nk::cli {

namespace {

// libnodekeeper for a program `debug` starts: $NODEKEEPER_LIBRARY, else
// next to this CLI (the build tree's client-lib/, or an installed lib/),
// else the loader's search path.
std::string toolLibrary() {
  if (const char* given = std::getenv("NODEKEEPER_LIBRARY"); given && *given) return given;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path dir = self.parent_path();
    for (const auto& candidate : {dir / "../client-lib/libnodekeeper.so", dir / "../lib/x86_64-linux-gnu/libnodekeeper.so.0",
                                  dir / "../lib/libnodekeeper.so.0"})
      if (std::filesystem::exists(candidate, ec)) return std::filesystem::weakly_canonical(candidate, ec).string();
  }
  return "libnodekeeper.so.0";
}

std::string describeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + strsignal(WTERMSIG(status));
  return "stopped";
}

}  // namespace

DebugSessionRunner::DebugSessionRunner(std::ostream& out, std::ostream& err, std::string socket_path,
                                       std::chrono::milliseconds timeout, bool json)
    : out_(out), err_(err), socket_path_(std::move(socket_path)), timeout_(timeout), json_(json) {}

int DebugSessionRunner::fail(const std::string& message) {
  err_ << "nodekeeper: " << message << "\n" << std::flush;
  return 1;
}

Result<pid_t> DebugSessionRunner::launch(const std::vector<std::string>& program, bool break_at_start,
                                         ProgramIo io) {
  std::string library = toolLibrary();
  // Set up before fork: the child only execs.
  std::vector<std::string> env_settings{"NODEKEEPER_SOCKET=" + socket_path_};
  if (!std::getenv("OMP_TOOL_LIBRARIES")) env_settings.push_back("OMP_TOOL_LIBRARIES=" + library);
  if (!std::getenv("NODEKEEPER_TASKS")) env_settings.push_back("NODEKEEPER_TASKS=lossless");
  if (break_at_start) env_settings.push_back("NODEKEEPER_BREAK_AT_START=1");
  std::vector<char*> argv;
  for (const std::string& word : program) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return internalError(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) return internalError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(report[0]);
    // dup2 leaves the copies open across exec (the originals are CLOEXEC).
    if (io.output >= 0 && (dup2(io.output, STDOUT_FILENO) < 0 || dup2(io.output, STDERR_FILENO) < 0)) _exit(127);
    if (io.input >= 0 && dup2(io.input, STDIN_FILENO) < 0) _exit(127);
    for (std::string& setting : env_settings) putenv(setting.data());
    execvp(argv[0], argv.data());
    int error = errno;
    ssize_t ignored = write(report[1], &error, sizeof error);
    (void)ignored;
    _exit(127);
  }
  close(report[1]);
  int error = 0;
  ssize_t got = read(report[0], &error, sizeof error);
  close(report[0]);
  if (got == sizeof error) {
    waitpid(pid, nullptr, 0);
    return invalidArgument("debug: cannot run '" + program[0] + "': " + std::strerror(error));
  }
  launched_ = pid;
  return pid;
}

Result<pid_t> DebugSessionRunner::start(const Invocation& invocation) {
  // Every descriptor here is CLOEXEC: the program gets only its dup2 copies.
  struct Fd {
    int fd = -1;
    ~Fd() {
      if (fd >= 0) close(fd);
    }
  } output, input, pipe_read;
  std::optional<std::string> batch = invocation.options.value("batch");
  if (auto file = invocation.options.value("program-output")) {
    output.fd = open(file->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (output.fd < 0)
      return invalidArgument("debug: cannot write --program-output file '" + *file + "': " + std::strerror(errno));
  } else if (json_ || batch) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return internalError(std::string("pipe: ") + std::strerror(errno));
    pipe_read.fd = ends[0];
    output.fd = ends[1];
  }
  // Commands read from stdin are the console's, not the program's.
  if (!batch || *batch == "-") {
    input.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (input.fd < 0) return internalError(std::string("/dev/null: ") + std::strerror(errno));
  }
  auto pid = launch(invocation.positionals, invocation.options.has("break-at-start"), {output.fd, input.fd});
  if (pid && pipe_read.fd >= 0)
    forwarder_ = std::make_unique<ProgramOutputForwarder>(std::exchange(pipe_read.fd, -1), STDERR_FILENO,
                                                          "program: ");
  return pid;  // our copy of the write end closes here: the pipe ends with the program
}

void DebugSessionRunner::programEnded() {
  // Long enough for what the pipe holds; a child the program left behind
  // holding the pipe open does not hold the console.
  if (forwarder_) forwarder_->finish(std::chrono::seconds(2));
  forwarder_.reset();
}

// A program's session appears with its first batch of task events.
Result<uint64_t> DebugSessionRunner::sessionOf(TasksClient& tasks, pid_t pid) {
  auto deadline = std::chrono::steady_clock::now() + std::max(timeout_, std::chrono::milliseconds(10000));
  while (true) {
    auto sessions = tasks.listSessions();
    if (!sessions) return sessions.error();
    uint64_t newest = 0;
    for (const auto& s : sessions->sessions())
      if (s.pid() == pid && s.live()) newest = std::max(newest, s.session_id());
    if (newest) return newest;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      launched_ = -1;
      return failedPrecondition("debug: the program " + describeExit(status) +
                                " before streaming task events (an OpenMP program built with clang -fopenmp, or "
                                "one using nodekeeper's task API?)");
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return unavailable("debug: pid " + std::to_string(pid) + " has not streamed task events to " + socket_path_ +
                         " yet");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

namespace {

// --batch FILE (or - for standard input); null: read standard input.
Result<std::unique_ptr<std::ifstream>> openBatch(const std::optional<std::string>& batch) {
  if (!batch || *batch == "-") return std::unique_ptr<std::ifstream>();
  auto file = std::make_unique<std::ifstream>(*batch);
  if (!*file) return invalidArgument("debug: cannot read --batch file '" + *batch + "': " + std::strerror(errno));
  return file;
}

// Fills the replay console; returns where the recording stopped being
// readable (empty: it was read whole), or why it could not be read at all.
using EventSource = std::function<Result<std::string>(ReplayConsole&)>;

// As RecordingLoader reads a file, up to its last good frame, but keeping
// the events in order instead of only the graph they build.
Result<std::string> eventsFromFile(const std::filesystem::path& path, ReplayConsole& console) {
  // Copies the names, which point into the frame.
  return RecordingLoader::forEachFrame(path, [&](std::span<const GraphEvent> events) { console.append(events); });
}

// An ended session's recording through the daemon, which checks that the
// caller may see it (the file itself is usually the daemon's alone).
Result<std::string> eventsFromSession(TasksClient& tasks, uint64_t session, ReplayConsole& console) {
  std::vector<GraphEvent> events;
  TaskEventTranslator translator;
  Status watched = tasks.watch(session, [&](const v1::TaskEventBatch& batch) {
    (void)translator.toGraphEvents(batch, events);  // the daemon checked the batch before recording it
    console.append(events);
    return true;
  });
  if (!watched && watched.error().code != ErrorCode::kDataLoss) return watched.error();
  return watched ? std::string() : watched.error().message;
}

// The session as the daemon lists it: whether its program still runs, and
// its pid (for gdb). Nothing when the listing failed: the live console then
// says why.
std::optional<v1::Session> listed(TasksClient& tasks, uint64_t session) {
  auto sessions = tasks.listSessions();
  if (!sessions) return std::nullopt;
  for (const auto& s : sessions->sessions())
    if (s.session_id() == session) return s;
  return std::nullopt;
}

int replayRecording(std::ostream& out, std::ostream& err, bool json_output, const std::string& label,
                    const EventSource& events, const Invocation& invocation) {
  auto fail = [&](const std::string& message) {
    err << "nodekeeper: " << message << "\n" << std::flush;
    return 1;
  };
  std::optional<std::string> batch = invocation.options.value("batch");
  auto batch_file = openBatch(batch);
  if (!batch_file) return fail(batch_file.error().message);
  bool json = json_output || batch.has_value();
  bool interactive = !batch && isatty(STDIN_FILENO);

  ReplayConsole console(label, out, err, json);
  auto damage = events(console);
  if (!damage) return fail("debug: " + damage.error().message);
  if (!damage->empty())
    err << "nodekeeper: warning: " << *damage << "; replaying the " << console.total()
        << " events recorded before it\n"
        << std::flush;
  if (!json)
    out << "replaying " << label << ": " << console.total() << " events, no control ('help' lists the commands)\n";

  std::unique_ptr<LineEditor> editor;
  if (interactive) editor = std::make_unique<LineEditor>("(nk-replay) ", ReplayConsole::commandWords());
  std::istream& input = *batch_file ? **batch_file : std::cin;
  return console.run([&]() -> std::optional<std::string> {
    if (editor) return editor->read();
    std::string line;
    if (!std::getline(input, line)) return std::nullopt;
    return line;
  });
}

}  // namespace

int DebugSessionRunner::run(const Invocation& invocation, TasksClient& tasks) {
  const auto& positionals = invocation.positionals;
  if (invocation.after_separator) {
    auto pid = start(invocation);
    if (!pid) return fail(pid.error().message);
    auto session = sessionOf(tasks, *pid);
    if (!session) {
      if (launched_ > 0) kill(launched_, SIGTERM), waitpid(launched_, nullptr, 0);
      programEnded();
      return fail(session.error().message);
    }
    return console(*session, *pid, invocation);
  }
  if (positionals.size() != 1)
    return fail("debug: give one SESSION, or '-- PROGRAM [ARGS]' to start one (see 'nodekeeper debug --help')");
  if (invocation.options.has("break-at-start"))
    return fail("debug: --break-at-start is for a program it starts ('debug --break-at-start -- PROGRAM')");
  if (invocation.options.has("program-output"))
    return fail("debug: --program-output is for a program it starts ('debug --program-output FILE -- PROGRAM'); "
                "an attached program's output stays where that program sends it");
  std::error_code ec;
  if (std::filesystem::is_regular_file(positionals[0], ec)) {
    const std::filesystem::path path = positionals[0];
    return replayRecording(out_, err_, json_, path.string(),
                           [&](ReplayConsole& c) { return eventsFromFile(path, c); }, invocation);
  }
  auto session = tasks.resolveSession(positionals[0], "debug");
  if (session) {
    auto record = listed(tasks, *session);
    if (record && !record->live()) {
      // Its program has gone: what is left to debug is the recording.
      return replayRecording(out_, err_, json_, "session " + std::to_string(*session),
                             [&](ReplayConsole& c) { return eventsFromSession(tasks, *session, c); }, invocation);
    }
    return console(*session, record ? record->pid() : -1, invocation);
  }
  // Not among the caller's sessions: the daemon says why (another user's,
  // or none such) when asked for the id itself.
  const std::string& word = positionals[0];
  if (word.empty() || word.find_first_not_of("0123456789") != std::string::npos || word.size() > 18)
    return fail(session.error().message);
  return console(std::stoull(word), -1, invocation);
}

int DebugSessionRunner::console(uint64_t session, pid_t target_pid, const Invocation& invocation) {
  uint32_t grace_s = 0;
  if (auto grace = invocation.options.value("grace")) {
    char* end = nullptr;
    unsigned long value = std::strtoul(grace->c_str(), &end, 10);
    if (end == grace->c_str() || *end != '\0' || value < 1 || value > 86400)
      return fail("debug: --grace '" + *grace + "' is not a number of seconds from 1 to 86400");
    grace_s = static_cast<uint32_t>(value);
  }
  std::optional<std::string> batch = invocation.options.value("batch");
  auto batch_file = openBatch(batch);
  if (!batch_file) return fail(batch_file.error().message);
  bool json = json_ || batch.has_value();
  bool interactive = !batch && isatty(STDIN_FILENO);

  DebugClient::Callbacks callbacks;
  if (interactive) {
    // News interrupts the prompt on a terminal; a script reads answers only.
    callbacks.news = [this](const v1::DebugUpdate& update) {
      if (update.has_ack() && !update.ack().message().empty()) err_ << "[" << update.ack().message() << "]\n" << std::flush;
    };
  }
  DebugClient client(socket_path_, callbacks);
  auto attached = client.attach(session, false, grace_s, std::max(timeout_, std::chrono::milliseconds(5000)));
  if (!attached) return fail("debug: " + attached.error().message);
  if (!json) out_ << attached->ack().message() << "\n";

  GdbAttacher attacher(client, target_pid, interactive, std::chrono::seconds(30));
  DebugConsole console(client, out_, err_, json,
                       [&attacher](const std::string& function) { return attacher.run(function); });
  std::unique_ptr<LineEditor> editor;
  if (interactive) editor = std::make_unique<LineEditor>("(nk-debug) ", DebugCommandParser::commandWords());
  std::istream& input = *batch_file ? **batch_file : std::cin;
  int code = console.run([&]() -> std::optional<std::string> {
    if (editor) return editor->read();
    std::string line;
    if (!std::getline(input, line)) return std::nullopt;
    return line;
  });

  if (launched_ > 0) {
    // A program the console started runs to its end.
    v1::DebugCommand go;
    go.mutable_continue_all();
    (void)client.call(go, std::chrono::seconds(5));
    client.close();
    int status = 0;
    waitpid(launched_, &status, 0);
    programEnded();
    if (!json) out_ << "the program " << describeExit(status) << "\n";
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) code = code ? code : 1;
    launched_ = -1;
  }
  return code;
}

}  // namespace nk::cli
