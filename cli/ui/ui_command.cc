#include "cli/ui/ui_command.h"

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <ostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/interrupt_watcher.h"
#include "cli/ui/ui_server.h"

namespace nk::ui {

namespace {

int fail(std::ostream& err, const std::string& message) {
  err << "nodekeeper: " << message << "\n" << std::flush;
  return 1;
}

}  // namespace

int UiCommand::run(const cli::Invocation& invocation, std::ostream& out, std::ostream& err) {
  uint16_t port = 0;
  if (auto given = invocation.options.value("port")) {
    char* end = nullptr;
    unsigned long value = std::strtoul(given->c_str(), &end, 10);
    if (given->empty() || end == given->c_str() || *end != '\0' || value > 65535 || (*given)[0] == '-')
      return fail(err, "ui: --port '" + *given + "' is not a port number from 0 to 65535 (0: any free one)");
    port = static_cast<uint16_t>(value);
  }
  auto token = UiToken::generate();
  if (!token) return fail(err, "ui: " + token.error().message);

  UiServer::Options options;
  options.socket_path = cli::CommandLine::socketPath(invocation.global, std::getenv("NODEKEEPER_SOCKET"));
  options.timeout = std::chrono::milliseconds(std::llround(invocation.global.timeout_s * 1000.0));
  const std::string token_text = token->text();
  UiServer server(options, std::move(*token));
  auto bound = server.bind(port);
  if (!bound) return fail(err, bound.error().message);

  // A tab closed mid-write must not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  cli::InterruptWatcher interrupts;  // before the URL: a signal right after it is seen
  if (!interrupts.valid()) return fail(err, "ui: cannot watch for Ctrl-C and SIGTERM, so could never stop cleanly");
  const std::string url = "http://127.0.0.1:" + std::to_string(*bound) + "/?token=" + token_text;
  if (invocation.global.json)
    out << nlohmann::json{{"url", url}}.dump() << "\n" << std::flush;
  else
    out << url << "\n" << std::flush;

  std::thread listener([&server] { server.run(); });
  while (!interrupts.wait(std::chrono::milliseconds(500))) {
  }
  server.stop();
  listener.join();
  return 0;
}

}  // namespace nk::ui
