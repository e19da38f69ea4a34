#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nk::wire {

// The rank's recent MPI operations (MPFL's message log, for the log
// probe), in a fixed ring laid out in a memory region the agent maps from
// a file (/dev/shm/nodekeeper-pmpi-<pid>.log), so the daemon can read it
// while the rank runs, hangs or is stopped. Layout, host byte order:
//   header: magic "NKML", version 2, capacity, entry size, the count of
//           entries ever written (atomic), then the signal the rank is
//           ending by (atomic, 0: none)
//   entries: a sequence number (odd while being written), the operation
//           (NUL-padded), peer, tag, bytes, start and end (CLOCK_REALTIME
//           ns) and the MPI return code
// Writers take a slot with one atomic add; a reader copies an entry and
// keeps it only if its sequence number was even and unchanged around the
// copy.
class MessageLog {
 public:
  struct Entry {
    std::string operation;
    int32_t peer = -1;  // world rank; -1 any or none
    int32_t tag = 0;
    uint64_t bytes = 0;
    int64_t start_ns = 0, end_ns = 0;
    int32_t outcome = 0;  // MPI error code
  };

  static constexpr uint32_t kMagic = 0x4c4d4b4e;  // "NKML"
  static constexpr uint32_t kVersion = 2;
  static size_t regionSize(uint32_t capacity);

  // Lays out an empty log in `region` (at least regionSize(capacity)).
  MessageLog(std::span<std::byte> region, uint32_t capacity);

  void append(const char* operation, int32_t peer, int32_t tag, uint64_t bytes, int64_t start_ns, int64_t end_ns,
              int32_t outcome);

  // The entries still in a region, oldest first; empty with `error` set
  // when it is not a message log.
  static std::vector<Entry> read(std::span<const std::byte> region, std::string* error = nullptr);
  // The same from two copies of the region, `later` taken after `region`:
  // an entry is kept when its sequence number was even and the same in
  // both. For a reader that copies the file rather than map it: the file's
  // owner may truncate it, and a mapped page past the new end is SIGBUS.
  static std::vector<Entry> read(std::span<const std::byte> region, std::span<const std::byte> later,
                                 std::string* error = nullptr);

  // Where the rank's signal handler marks the signal it is ending by (a
  // lock-free store, safe in a handler). Its report to the daemon may not
  // get out before mpirun's SIGKILL follows on a busy node; this mark stays
  // in the file for the daemon to read after the process is gone.
  std::atomic<int32_t>* endingSignalMark();
  // The mark in a region; 0 when none or when it is not a message log.
  static int32_t endingSignal(std::span<const std::byte> region);

 private:
  struct Header;
  struct Slot;
  Header* header_;
  Slot* slots_;
  uint32_t capacity_;
};

}  // namespace nk::wire
