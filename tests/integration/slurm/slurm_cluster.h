#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "testlib/background_program.h"
#include "testlib/run_program.h"

namespace nk::test {

// A one-node Slurm cluster for a test: munged, slurmctld and slurmd as plain
// foreground processes, with their key, configuration, state and logs in
// `dir`, on 127.0.0.1 and free ports, proctrack/pgid, no cgroups, no
// accounting. The plugstack.conf holds `plugstack_line` ("" for none).
// Everything it started (and every job step left) is killed and reaped
// when it goes, even after a failed start.
class SlurmCluster {
 public:
  SlurmCluster() = default;
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;
  ~SlurmCluster();

  // False, with the reason in lastError(), when a daemon cannot start or the
  // node is not idle within a minute.
  bool start(const std::filesystem::path& dir, const std::string& plugstack_line);
  void stop();
  std::string lastError() const { return error_; }

  // Runs a Slurm client (srun, scontrol, squeue, scancel) against this
  // cluster, as root, to completion.
  ProcessResult run(const std::vector<std::string>& argv, std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  // The argv that runs a Slurm client against this cluster (for a
  // BackgroundProgram).
  std::vector<std::string> command(const std::vector<std::string>& argv) const;
  // The id of the job of this name, once slurmctld lists it; "" otherwise.
  std::string jobIdByName(const std::string& name) const;
  // `scontrol show job ID -o`'s field, e.g. "AdminComment" or "JobState";
  // "" when absent.
  std::string jobField(const std::string& job_id, const std::string& field) const;
  // The daemons' logs, for a failure's message.
  std::string logs() const;

 private:
  void killLeftovers() const;

  std::filesystem::path dir_;
  std::filesystem::path conf_;
  std::string error_;
  std::unique_ptr<BackgroundProgram> munged_, slurmctld_, slurmd_;
};

}  // namespace nk::test
