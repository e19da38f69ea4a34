#include "cli/ui/request_guard.h"

#include <algorithm>
#include <cctype>

namespace nk::ui {

namespace {

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// "application/json; charset=utf-8" -> "application/json".
std::string_view mediaType(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  while (!content_type.empty() && content_type.front() == ' ') content_type.remove_prefix(1);
  return content_type;
}

}  // namespace

RequestGuard::RequestGuard(uint16_t port) : port_(port) {}

bool RequestGuard::hostAllowed(std::string_view host) const {
  const std::string port = ":" + std::to_string(port_);
  return equalsIgnoringCase(host, "127.0.0.1" + port) || equalsIgnoringCase(host, "localhost" + port);
}

bool RequestGuard::originAllowed(std::string_view origin) const {
  const std::string port = ":" + std::to_string(port_);
  return equalsIgnoringCase(origin, "http://127.0.0.1" + port) || equalsIgnoringCase(origin, "http://localhost" + port);
}

std::optional<RequestGuard::Refusal> RequestGuard::check(const Request& request) const {
  if (!hostAllowed(request.host))
    return Refusal{403, "refused: the Host header must be 127.0.0.1:" + std::to_string(port_) + " or localhost:" +
                            std::to_string(port_)};
  if (request.method == "GET" || request.method == "HEAD") return std::nullopt;
  if (request.method != "POST") return Refusal{405, "refused: only GET and POST are served"};
  if (request.origin && !originAllowed(*request.origin))
    return Refusal{403, "refused: a POST from origin '" + std::string(request.origin->substr(0, 200)) +
                            "'; only this server's own page may post"};
  if (!equalsIgnoringCase(mediaType(request.content_type), "application/json"))
    return Refusal{415, "refused: a POST needs Content-Type: application/json"};
  if (request.body_size > kMaxBody)
    return Refusal{413, "refused: the body is over " + std::to_string(kMaxBody / 1024) + " KiB"};
  return std::nullopt;
}

}  // namespace nk::ui
