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
  // A world rank the agent could not map (a process from outside
  // MPI_COMM_WORLD, as MPI_Comm_spawn makes).
  static constexpr uint32_t kUnmapped = UINT32_MAX;

  struct Info {
    std::string id;
    std::vector<uint32_t> world_ranks;  // index: rank in the communicator (the local group's)
    // An intercommunicator's remote group (index: remote rank); empty for
    // an intracommunicator. Point-to-point ranks on an intercommunicator
    // are remote ranks.
    std::vector<uint32_t> remote_world_ranks;
    uint64_t children = 0;     // communicators made from it so far
    uint64_t collectives = 0;  // collectives this rank entered on it

    bool isInter() const { return !remote_world_ranks.empty(); }
    // Every rank a collective on it waits for: both groups of an
    // intercommunicator.
    std::vector<uint32_t> allWorldRanks() const;
  };

  void add(uint64_t handle, std::string id, std::vector<uint32_t> world_ranks,
           std::vector<uint32_t> remote_world_ranks = {});
  // The id a communicator made from `parent` gets (counting the creation):
  // for calls every member of the parent makes.
  std::string childId(uint64_t parent, std::optional<int> colour);
  // The id of a communicator only its own members create from `parent`
  // (MPI_Comm_create_group): the parent's count would drift apart between
  // members and the others, so the id says who the members are instead,
  // and counts creations with the same parent and members.
  std::string memberChildId(uint64_t parent, std::span<const uint32_t> members);
  // The id of an intercommunicator between two groups (MPI_Intercomm_create):
  // the two sides come from different parents, so the id names both groups,
  // the one holding the lowest world rank first, and counts creations
  // between the same groups. Both sides compute the same.
  std::string interId(std::span<const uint32_t> local, std::span<const uint32_t> remote);
  void remove(uint64_t handle);
  // A copy, or nothing for a communicator the agent did not see made.
  std::optional<Info> find(uint64_t handle) const;
  // Entering a collective on `handle`: its sequence number (1, 2, ...), 0
  // for an unknown communicator.
  uint64_t enterCollective(uint64_t handle);
  // The world rank of peer `rank` in point-to-point on `handle` (a remote
  // rank on an intercommunicator); nullopt when unknown.
  std::optional<uint32_t> worldRank(uint64_t handle, int rank) const;
  // Every communicator's id and collective count, for the heartbeat.
  std::vector<std::pair<std::string, uint64_t>> progress() const;

  // Ranks as compact text: "0-3,6,8-9".
  static std::string rankList(std::span<const uint32_t> ranks);

 private:
  std::string countedId(const std::string& key);

  mutable std::mutex mutex_;  // communicators change rarely; collectives take it once
  std::unordered_map<uint64_t, Info> by_handle_;
  // Creations named by their members (memberChildId, interId): how many
  // so far with the same key.
  std::unordered_map<std::string, uint64_t> creations_by_members_;
};

}  // namespace nk::pmpi
