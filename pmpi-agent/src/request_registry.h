#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace nk::pmpi {

// What the program's own nonblocking requests are for (the call that made
// them, the peer in MPI_COMM_WORLD, or the collective they are), so that a
// wait on them that times out names its peers, or the collective for the
// daemons to find its laggards. Handles as integers: tested without MPI.
class RequestRegistry {
 public:
  static constexpr int64_t kAnyPeer = -1;  // MPI_ANY_SOURCE: any member may be the one
  static constexpr int64_t kNoPeer = -2;   // a collective's request, or unknown

  struct Entry {
    const char* operation = "";
    int64_t peer = kNoPeer;
    uint64_t communicator = 0;  // handle, for kAnyPeer and collectives
    bool persistent = false;
    // A nonblocking collective (MPI_Iallreduce, ...): the how-manyth
    // collective on `communicator` it is (0: an unknown communicator).
    bool collective = false;
    uint64_t collective_seq = 0;
  };

  void add(uint64_t request, Entry entry);
  std::optional<Entry> find(uint64_t request) const;
  // A request that completed: gone unless persistent (those live until
  // MPI_Request_free).
  void completed(uint64_t request);
  void freed(uint64_t request);
  size_t size() const;
  // Of `requests` (a wait's), the nonblocking collective to report when the
  // wait times out: the latest started on the first communicator among
  // them, since the wait needs that one too and the daemons then name
  // every member that has not entered it. Nothing if none is a collective.
  std::optional<Entry> latestCollective(std::span<const uint64_t> requests) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> by_request_;
};

}  // namespace nk::pmpi
