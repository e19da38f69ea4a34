#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace nk::pmpi {

// Calls in flight that another thread watches for their deadline. The
// blocking collectives run as themselves: Open MPI's tuned blocking
// algorithms are much faster for big messages than the libnbc schedules
// behind their nonblocking forms (measured: 6% of an FT-shaped run), so the
// agent cannot wait on them with a test loop and watches them from its
// thread instead. A call past its deadline is due again after twice as
// long, and so on, like the test loop's reports.
//
// A fixed table: a call takes a slot for its duration (at most kSlots at
// once, that is threads in a collective; beyond that a call goes unwatched).
template <typename Payload>
class DeadlineWatch {
 public:
  static constexpr size_t kSlots = 64;

  // The slot to give back to leave(); nullopt: the table is full.
  std::optional<size_t> enter(Payload payload, int64_t now_ns, int64_t deadline_ns) {
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < kSlots; ++i) {
      size_t index = (next_ + i) % kSlots;
      Slot& s = slots_[index];
      if (s.used) continue;
      s = Slot{true, std::move(payload), now_ns, deadline_ns, now_ns + deadline_ns, 0};
      next_ = (index + 1) % kSlots;
      return index;
    }
    return std::nullopt;
  }
  // The call returned: how long it took.
  int64_t leave(size_t slot, int64_t now_ns) {
    std::lock_guard lock(mutex_);
    Slot& s = slots_[slot];
    s.used = false;
    return now_ns - s.start_ns;
  }
  // The calls past their (next) deadline, with how long they have waited.
  std::vector<std::pair<Payload, int64_t>> due(int64_t now_ns) {
    std::vector<std::pair<Payload, int64_t>> out;
    std::lock_guard lock(mutex_);
    for (Slot& s : slots_) {
      if (!s.used || now_ns < s.next_report_ns) continue;
      out.emplace_back(s.payload, now_ns - s.start_ns);
      s.next_report_ns = now_ns + (s.deadline_ns << std::min(++s.reports, 10));
    }
    return out;
  }

 private:
  struct Slot {
    bool used = false;
    Payload payload{};
    int64_t start_ns = 0, deadline_ns = 0, next_report_ns = 0;
    int reports = 0;
  };
  std::mutex mutex_;
  std::array<Slot, kSlots> slots_{};
  size_t next_ = 0;
};

}  // namespace nk::pmpi
