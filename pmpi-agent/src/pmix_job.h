#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon_link.h"
#include "pmix_values.h"

namespace nk::pmpi {

// The rank's job as its PMIx server (Open MPI's mpirun, Slurm's pmix
// plugin) knows it: the agent joins PMIx beside the MPI library (PMIx_Init
// is reference counted; PMIx_Finalize when the agent ends) and exchanges
// its daemon's name and endpoint through PMIx rather than over the
// program's MPI_COMM_WORLD.
class PmixJob {
 public:
  // nullptr, and `why`, when the rank runs under no PMIx server, the MPI
  // library is not in this process's PMIx, or PMIx does not take it (or
  // the agent was built without PMIx).
  static std::unique_ptr<PmixJob> join(std::string* why);
  struct Key {
    explicit Key() = default;
  };
  explicit PmixJob(Key) {}  // through join()
  ~PmixJob();
  PmixJob(const PmixJob&) = delete;
  PmixJob& operator=(const PmixJob&) = delete;

  const std::string& nspace() const { return nspace_; }
  uint32_t rank() const { return rank_; }
  // PMIX_JOB_SIZE; nullopt when the server does not say.
  std::optional<uint32_t> jobSize() const;

  struct Exchanged {
    std::string job_id;  // rank 0's
    bool node_leader = true;  // the lowest rank of its node's daemon
    std::vector<JobNodeEntry> nodes;  // the node leader's only
    std::string problem;  // what PMIx did not give after the fence ("" when all)
  };
  // Collective over the job: each rank puts `mine`, PMIx_Fence collects
  // everything, then each rank reads what it needs (only the node leaders
  // read every rank's record). nullopt, and `why`, when the fence failed:
  // its status is the whole job's, so every rank then takes the same
  // other path. A failure after the fence is this rank's alone: it is
  // told in `problem` and the rank makes do without, since the others have
  // gone on and a collective fallback would find no partner.
  std::optional<Exchanged> exchange(const PmixValues::PeerRecord& mine, uint32_t world_size, std::string* why);

 private:
  std::optional<std::string> peerRecordOf(uint32_t pmix_rank) const;

  std::string nspace_;
  uint32_t rank_ = 0;
};

}  // namespace nk::pmpi
