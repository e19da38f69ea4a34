#include "connection_notifier.h"

#include <utility>

namespace nk::client {

ConnectionNotifier::ConnectionNotifier(std::string socket_path, std::atomic<bool>* absence_said,
                                       Clock::duration quiet_for)
    : socket_path_(std::move(socket_path)), absence_said_(absence_said), failing_(quiet_for) {}

std::atomic<bool>& ConnectionNotifier::processAbsenceSaid() {
  static std::atomic<bool> said{false};
  return said;
}

// A successful registration. Quiet on the first one: a managed program's
// output does not change. After a spell that was said, one line.
std::optional<std::string> ConnectionNotifier::connected() {
  failing_.answered();
  State before = std::exchange(state_, State::kManaged);
  bool was_managed = std::exchange(ever_managed_, true);
  if (before != State::kUnmanaged) return std::nullopt;
  return "nodekeeper: " + std::string(was_managed ? "reconnected" : "connected") + " to nodekeeperd at " +
         socket_path_ + "; managed";
}

// A failed attempt or a broken session: one line on the way to unmanaged,
// nothing while it stays so (the retries are silent), and nothing for a
// daemon that is only slow to answer until it has been silent for long.
std::optional<std::string> ConnectionNotifier::failed(const std::string& reason, Failure kind,
                                                      Clock::time_point now) {
  const bool long_silence = failing_.unanswered(now);
  if (state_ == State::kUnmanaged) return std::nullopt;
  std::string why = reason;
  if (kind == Failure::kNoAnswerYet) {
    if (!long_silence) return std::nullopt;
    why = "no answer for " + std::to_string(failing_.seconds(now)) + " s; last: " + reason;
  }
  State before = std::exchange(state_, State::kUnmanaged);
  if (before == State::kStarting) {
    if (absence_said_ && absence_said_->exchange(true)) return std::nullopt;
    return "nodekeeper: nodekeeperd not reachable at " + socket_path_ + " (" + why + "); running unmanaged";
  }
  if (before == State::kManaged)
    return "nodekeeper: lost nodekeeperd at " + socket_path_ + " (" + why + "); running unmanaged";
  return std::nullopt;
}

std::optional<std::string> ConnectionNotifier::gaveBack(uint32_t team_size, size_t threads_unpinned) {
  if (team_size == 0 && threads_unpinned == 0) return std::nullopt;
  std::string what;
  if (team_size > 0) what = "its own team size (" + std::to_string(team_size) + " threads) from the next parallel region";
  if (threads_unpinned > 0)
    what += std::string(what.empty() ? "" : " and ") + "its own affinity to " + std::to_string(threads_unpinned) +
            (threads_unpinned == 1 ? " thread" : " threads");
  return "nodekeeper: gave the program back " + what;
}

}  // namespace nk::client
