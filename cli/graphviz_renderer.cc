#include "cli/graphviz_renderer.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace nk::cli {

namespace {

// Both ends close on every path out.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    closeEnd(0);
    closeEnd(1);
  }
  void closeEnd(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

Result<std::string> GraphvizRenderer::toSvg(std::string_view dot) {
  Pipe in, out, err;
  if (::pipe2(in.fd, O_CLOEXEC) != 0 || ::pipe2(out.fd, O_CLOEXEC) != 0 || ::pipe2(err.fd, O_CLOEXEC) != 0)
    return internalError(std::string("svg: cannot make a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
  char program[] = "dot", format[] = "-Tsvg";
  char* argv[] = {program, format, nullptr};
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, "dot", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    return notFound(std::string("svg: cannot run Graphviz's dot (") + std::strerror(spawned) +
                    "); install the graphviz package, or use --format dot");
  in.closeEnd(0);
  out.closeEnd(1);
  err.closeEnd(1);
  // A writer thread: dot may fill its output pipe before it has read all
  // its input.
  std::thread writer([&in, dot] {
    size_t done = 0;
    while (done < dot.size()) {
      ssize_t n = ::write(in.fd[1], dot.data() + done, dot.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // dot went away; its status says why
      done += static_cast<size_t>(n);
    }
    in.closeEnd(1);
  });
  std::string svg, diagnostics;
  char buf[65536];
  for (ssize_t n; (n = ::read(out.fd[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    svg.append(buf, static_cast<size_t>(n));
  }
  for (ssize_t n; (n = ::read(err.fd[0], buf, sizeof buf)) > 0;) diagnostics.append(buf, static_cast<size_t>(n));
  writer.join();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    while (!diagnostics.empty() && diagnostics.back() == '\n') diagnostics.pop_back();
    return internalError("svg: Graphviz's dot failed" + (diagnostics.empty() ? std::string() : ": " + diagnostics));
  }
  return svg;
}

}  // namespace nk::cli
