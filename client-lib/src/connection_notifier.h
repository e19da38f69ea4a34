#pragma once

#include <optional>
#include <string>

namespace nk::client {

// Decides which connection changes deserve a stderr line: one when the app
// becomes unmanaged, one when it is managed again; silence otherwise.
class ConnectionNotifier {
 public:
  explicit ConnectionNotifier(std::string socket_path);

  [[nodiscard]] std::optional<std::string> connected();
  [[nodiscard]] std::optional<std::string> failed(const std::string& reason);

 private:
  enum class State { kStarting, kManaged, kUnmanaged };
  std::string socket_path_;
  State state_ = State::kStarting;
};

}  // namespace nk::client
