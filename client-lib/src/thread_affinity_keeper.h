#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
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

  // Gives every thread still pinned where the daemon put it its own mask
  // back; a thread the program moved since is left alone. Returns how many
  // threads were given back. The daemon's pins are forgotten either way.
  size_t giveBack(const ReadMask& read, const WriteMask& write);

  [[nodiscard]] std::optional<CpuList> ownMaskOf(int tid) const;

 private:
  struct Thread {
    CpuList own;
    CpuList pinned;  // empty: the daemon has not pinned it
  };
  mutable std::mutex mutex_;
  CpuList process_mask_;
  bool pins_possible_ = false;
  std::map<int, Thread> threads_;
};

}  // namespace nk::client
