#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

namespace nk::client {

// Remembers the affinity each thread of the program had before the daemon
// pinned it, so that a program whose daemon goes away gets it back at once
// instead of running pinned until the daemon returns. Thread safe.
class ThreadAffinityKeeper {
 public:
  using CpuList = std::vector<uint32_t>;
  using ReadMask = std::function<std::optional<CpuList>(int tid)>;
  using WriteMask = std::function<bool(int tid, const CpuList& cpus)>;

  // The process's mask before the library talked to the daemon.
  void setProcessMask(CpuList cpus);
  // Called just before the daemon first hears of the process: from then on
  // a new thread may have inherited a pin from the thread that made it.
  void pinsPossibleFromNow();
  // On the thread itself, with the mask it has now.
  void threadBegan(int tid, CpuList current);
  void threadEnded(int tid);
  // Where the daemon's decision says it pinned a thread (empty: not pinned).
  void daemonPinned(int tid, CpuList cpus);

  // Gives every thread that runs on one of the daemon's pins its own mask
  // back. Any of them, not only the last one heard of: the daemon may have
  // moved threads (affinity swaps) just before it died, without saying so.
  // A thread the program moved elsewhere since is left alone. Returns how
  // many threads were given back; the daemon's pins are forgotten.
  size_t giveBack(const ReadMask& read, const WriteMask& write);

  [[nodiscard]] std::optional<CpuList> ownMaskOf(int tid) const;

 private:
  mutable std::mutex mutex_;
  CpuList process_mask_;
  bool pins_possible_ = false;
  std::map<int, CpuList> own_;      // per thread
  std::set<CpuList> daemon_pins_;   // every mask the daemon pinned a thread to
};

}  // namespace nk::client
