#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nk::client {

// Decides which connection changes deserve a stderr line: one when the app
// becomes unmanaged, one when it is managed again; silence otherwise.
class ConnectionNotifier {
 public:
  // `absence_said`, when given, is shared by every part of the library
  // that may find the daemon missing at start: only the first says so.
  explicit ConnectionNotifier(std::string socket_path, std::atomic<bool>* absence_said = nullptr);

  // The process's flag for that (libnodekeeper's own parts use it).
  static std::atomic<bool>& processAbsenceSaid();

  [[nodiscard]] std::optional<std::string> connected();
  [[nodiscard]] std::optional<std::string> failed(const std::string& reason);
  // After a loss: what the program got back (its team size, 0: unchanged;
  // how many threads were unpinned). Nothing given back, nothing said.
  [[nodiscard]] static std::optional<std::string> gaveBack(uint32_t team_size, size_t threads_unpinned);

 private:
  enum class State { kStarting, kManaged, kUnmanaged };
  std::string socket_path_;
  std::atomic<bool>* absence_said_;
  State state_ = State::kStarting;
};

}  // namespace nk::client
