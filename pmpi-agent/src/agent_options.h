#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace nk::pmpi {

// The agent's settings, from the environment of each rank.
//   NODEKEEPER_PMPI=off               the agent passes every call through
//   NODEKEEPER_SOCKET                 the node daemon's socket
//   NODEKEEPER_NODE                   this rank's node name (default: the host name);
//                                     with NODEKEEPER_SOCKET, how tests run several
//                                     emulated nodes on one machine
//   NODEKEEPER_PMPI_DEADLINE_MS       a fixed response-timeout deadline
//   NODEKEEPER_PMPI_DEADLINE_FLOOR_MS the adaptive deadline's floor (default 5000)
//   NODEKEEPER_PMPI_HEARTBEAT_MS      progress reports to the daemon (default 200)
//   NODEKEEPER_JOB_ID                 the job's id (default: the launcher's, e.g.
//                                     PMIX_NAMESPACE or SLURM_JOB_ID.SLURM_STEP_ID)
//   NODEKEEPER_PMPI_PMIX=off          learn the job's nodes with a PMPI_Allgather even
//                                     under a PMIx server
//   NODEKEEPER_PMPI_VERBOSE=1         say on stderr (rank 0) how the job's nodes were
//                                     learnt when PMIx was not used
struct AgentOptions {
  bool enabled = true;
  std::string socket_path = "/run/nodekeeper/nodekeeperd.sock";
  std::string node;
  std::chrono::milliseconds fixed_deadline{0};
  std::chrono::milliseconds deadline_floor{5000};
  std::chrono::milliseconds heartbeat{200};
  std::string job_id;
  bool use_pmix = true;
  bool verbose = false;
  std::vector<std::string> warnings;  // one stderr line each

  [[nodiscard]] static AgentOptions fromEnvironment(const char* (*getenv)(const char*));
};

}  // namespace nk::pmpi
