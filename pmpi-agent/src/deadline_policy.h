#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace nk::pmpi {

// How long a blocking MPI call may wait before it counts as a response
// timeout. Fixed when the user sets one (NODEKEEPER_PMPI_DEADLINE_MS);
// otherwise adaptive: a multiple of the longest completion seen lately for
// that kind of call, never below a floor, so that a program whose
// collectives normally take seconds is not reported every time, and one
// whose calls take microseconds is reported soon after it stops.
class DeadlinePolicy {
 public:
  enum class Kind : uint8_t { kPointToPoint, kCollective, kWait, kCount };

  struct Settings {
    std::chrono::nanoseconds fixed{0};  // nonzero: always this
    std::chrono::nanoseconds floor = std::chrono::seconds(5);
    std::chrono::nanoseconds ceiling = std::chrono::minutes(10);
    double factor = 10.0;  // times the longest recent completion
  };

  explicit DeadlinePolicy(Settings settings) : settings_(settings) {}

  std::chrono::nanoseconds deadline(Kind kind) const;
  // A call of `kind` completed after `waited`.
  void completed(Kind kind, std::chrono::nanoseconds waited);

 private:
  // The longest of the last kWindow completions per kind.
  static constexpr size_t kWindow = 64;
  struct Recent {
    std::array<int64_t, kWindow> ns{};
    size_t next = 0;
  };

  Settings settings_;
  mutable std::mutex mutex_;  // only taken when a call actually waited
  std::array<Recent, static_cast<size_t>(Kind::kCount)> recent_{};
};

}  // namespace nk::pmpi
