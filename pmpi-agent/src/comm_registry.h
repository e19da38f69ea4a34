#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace nk::pmpi {

// What the agent knows of each communicator: an id that every member
// computes alike without talking ("world"; a communicator made from one
// gets its parent's id, the creation's number on the parent, and its split
// colour), and its members' ranks in MPI_COMM_WORLD, so that a symptom
// names world ranks whichever communicator it happened on. Handles are
// kept as integers: this is plain C++, tested without MPI.
class CommRegistry {
 public:
  struct Info {
    std::string id;
    std::vector<uint32_t> world_ranks;  // index: rank in the communicator
    uint64_t children = 0;              // communicators made from it so far
    uint64_t collectives = 0;           // collectives this rank entered on it
  };

  void add(uint64_t handle, std::string id, std::vector<uint32_t> world_ranks);
  // The id a communicator made from `parent` gets (counting the creation).
  std::string childId(uint64_t parent, std::optional<int> colour);
  void remove(uint64_t handle);
  // A copy, or nothing for a communicator the agent did not see made.
  std::optional<Info> find(uint64_t handle) const;
  // Entering a collective on `handle`: its sequence number (1, 2, ...), 0
  // for an unknown communicator.
  uint64_t enterCollective(uint64_t handle);
  // Rank `rank` of `handle` in MPI_COMM_WORLD; nullopt when unknown.
  std::optional<uint32_t> worldRank(uint64_t handle, int rank) const;
  // Every communicator's id and collective count, for the heartbeat.
  std::vector<std::pair<std::string, uint64_t>> progress() const;

 private:
  mutable std::mutex mutex_;  // communicators change rarely; collectives take it once
  std::unordered_map<uint64_t, Info> by_handle_;
};

}  // namespace nk::pmpi
