#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nk::pmpi {

// The values the agent reads from PMIx and exchanges through it, as plain
// text, so that their parsing is tested without a PMIx server.
class PmixValues {
 public:
  // What each rank puts into PMIx at MPI_Init for the others: its job id,
  // its MPI_COMM_WORLD rank, and its node's daemon (how the daemons name
  // that node and reach each other).
  struct PeerRecord {
    std::string job;
    uint32_t world_rank = 0;
    std::string node;
    std::string endpoint;
  };
  // Fields longer than these are refused on both sides: the record comes
  // from another process.
  static constexpr size_t kMaxField = 256;

  static std::string encode(const PeerRecord& record);
  // nullopt: not a record of this version, a field too long or empty
  // (except the endpoint's), or a rank that is not a number.
  static std::optional<PeerRecord> decode(std::string_view text);

  // A PMIx rank list (PMIX_LOCAL_PEERS: "0,1,5"), ascending as given;
  // nullopt when malformed or longer than `max_ranks`.
  static std::optional<std::vector<uint32_t>> parseRankList(std::string_view text, size_t max_ranks);
};

}  // namespace nk::pmpi
