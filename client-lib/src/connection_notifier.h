#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "base/unanswered_spell.h"

namespace nk::client {

// Decides which connection changes deserve a stderr line: one when the
// daemon is gone, one when it is back; silence otherwise. A busy daemon is
// not a gone one: a failure that is only a missing answer (deadline,
// cancelled stream) is said only once the daemon has answered nothing for
// `quiet_for`.
class ConnectionNotifier {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Failure {
    kDefinite,     // no socket, connection refused, or the daemon said no
    kNoAnswerYet,  // slow or cut short: retried quietly
  };
  static constexpr std::chrono::seconds kDefaultQuietFor{5};

  // `absence_said`, when given, is shared by every part of the library
  // that may find the daemon missing at start: only the first says so.
  explicit ConnectionNotifier(std::string socket_path, std::atomic<bool>* absence_said = nullptr,
                              Clock::duration quiet_for = kDefaultQuietFor);

  // The process's flag for that (libnodekeeper's own parts use it).
  static std::atomic<bool>& processAbsenceSaid();

  [[nodiscard]] std::optional<std::string> connected();
  [[nodiscard]] std::optional<std::string> failed(const std::string& reason, Failure kind = Failure::kDefinite,
                                                  Clock::time_point now = Clock::now());
  // After a loss: what the program got back (its team size, 0: unchanged;
  // how many threads were unpinned). Nothing given back, nothing said.
  [[nodiscard]] static std::optional<std::string> gaveBack(uint32_t team_size, size_t threads_unpinned);

 private:
  enum class State { kStarting, kManaged, kUnmanaged };
  std::string socket_path_;
  std::atomic<bool>* absence_said_;
  State state_ = State::kStarting;
  bool ever_managed_ = false;
  UnansweredSpell failing_;  // failures since the last success
};

}  // namespace nk::client
