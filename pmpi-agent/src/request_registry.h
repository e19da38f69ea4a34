#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace nk::pmpi {

// What the program's own nonblocking requests are for (the call that made
// them, the peer in MPI_COMM_WORLD), so that a wait on them that times out
// names its peers. Handles as integers: tested without MPI.
class RequestRegistry {
 public:
  static constexpr int64_t kAnyPeer = -1;  // MPI_ANY_SOURCE: any member may be the one
  static constexpr int64_t kNoPeer = -2;   // a collective's request, or unknown

  struct Entry {
    const char* operation = "";
    int64_t peer = kNoPeer;
    uint64_t communicator = 0;  // handle, for kAnyPeer and collectives
    bool persistent = false;
  };

  void add(uint64_t request, Entry entry);
  std::optional<Entry> find(uint64_t request) const;
  // A request that completed: gone unless persistent (those live until
  // MPI_Request_free).
  void completed(uint64_t request);
  void freed(uint64_t request);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> by_request_;
};

}  // namespace nk::pmpi
