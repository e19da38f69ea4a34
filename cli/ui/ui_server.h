#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/result.h"
#include "cli/ui/ui_token.h"

namespace nk::ui {

class NodeFeed;
class SessionFeed;

// The HTTP side of `nodekeeper ui`: one listener on 127.0.0.1, the page's
// files compiled into the binary (none read from disk), the JSON and SSE
// endpoints of the page's contract, every request checked (RequestGuard,
// then the token) before anything else. Every daemon call is this
// process's own, over the daemon's socket: the daemon sees the user who ran
// the server and decides what the page may see and do.
class UiServer {
 public:
  struct Options {
    std::string socket_path;
    std::chrono::milliseconds timeout{5000};
    // SSE streams open at once, over all tabs; one more is refused (503).
    size_t max_streams = 32;
  };

  UiServer(Options options, UiToken token);
  ~UiServer();
  UiServer(const UiServer&) = delete;
  UiServer& operator=(const UiServer&) = delete;

  // Binds 127.0.0.1:port (0: any free port); the port bound.
  Result<uint16_t> bind(uint16_t port);
  // Serves until stop(); from another thread.
  void run();
  // Stops listening, ends every stream, closes the Debug streams.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nk::ui
