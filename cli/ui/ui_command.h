#pragma once

#include <iosfwd>

namespace nk::cli {
struct Invocation;
}

namespace nk::ui {

// `nodekeeper ui [--port N]`: binds, prints the page's URL with its token
// (or {"url":...} with --json) and serves until SIGINT or SIGTERM; exit 0
// then, 1 after a one-line error (a port in use, no token).
class UiCommand {
 public:
  static int run(const cli::Invocation& invocation, std::ostream& out, std::ostream& err);
};

}  // namespace nk::ui
