#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nk::ui {

// The checks every request to `nodekeeper ui` passes before its token is
// even looked at: a Host naming this server (a page on another origin that
// rebinds its DNS name to 127.0.0.1 sends its own name: refused), and for
// a POST a JSON body of bounded size from this origin (a form another site
// posts cannot set application/json without CORS preflight, and a browser
// names the posting origin).
class RequestGuard {
 public:
  static constexpr size_t kMaxBody = 64 * 1024;

  struct Request {
    std::string_view method;
    std::string_view host;          // the Host header
    std::optional<std::string_view> origin;
    std::string_view content_type;
    size_t body_size = 0;
  };
  struct Refusal {
    int status = 403;
    std::string message;  // one line, plain text
  };

  explicit RequestGuard(uint16_t port);
  uint16_t port() const { return port_; }

  std::optional<Refusal> check(const Request& request) const;
  // Whether `host` is 127.0.0.1:PORT or localhost:PORT.
  bool hostAllowed(std::string_view host) const;
  bool originAllowed(std::string_view origin) const;

 private:
  uint16_t port_;
};

}  // namespace nk::ui
