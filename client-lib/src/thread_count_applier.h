#pragma once

#include <atomic>
#include <cstdint>

namespace nk::client {

// DCT in the app: holds the daemon's latest thread count D and applies it on
// the encountering thread between parallel regions, through one setter.
class ThreadCountApplier {
 public:
  using Setter = void (*)(int);
  using Getter = int (*)();

  explicit ThreadCountApplier(Setter setter = nullptr, Getter getter = nullptr);

  void setSetter(Setter setter);
  // omp_get_max_threads: read once, before the first D, as the program's own
  // team size.
  void setGetter(Getter getter);
  void setDecision(uint32_t d);
  bool applyPending();
  // The daemon is gone: the program's own team size becomes pending again.
  // Returns it, or 0 when no D was ever applied (nothing to give back).
  uint32_t giveBackOwnTeamSize();
  [[nodiscard]] uint32_t ownTeamSize() const { return own_.load(std::memory_order_relaxed); }
  [[nodiscard]] bool hasPending() const { return pending_.load(std::memory_order_relaxed) != 0; }
  [[nodiscard]] uint32_t decision() const { return decision_.load(std::memory_order_relaxed); }
  [[nodiscard]] uint32_t applied() const { return applied_.load(std::memory_order_relaxed); }
  [[nodiscard]] uint64_t applyCount() const { return apply_count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<Setter> setter_;
  std::atomic<Getter> getter_;
  std::atomic<uint32_t> own_{0};
  std::atomic<uint32_t> pending_{0};
  std::atomic<uint32_t> decision_{0};
  std::atomic<uint32_t> applied_{0};
  std::atomic<uint64_t> apply_count_{0};
};

}  // namespace nk::client
