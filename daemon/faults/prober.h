#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "faults/process_state_reader.h"

namespace nk {

// MPFL's message probes, answered by a node's daemon. Behind an
// interface: the daemon probes over gRPC, the simulation and unit tests
// answer from their model.
struct ResponseFindings {
  size_t attempts = 0;
  size_t answered = 0;
  std::chrono::microseconds best_rtt{0};
  bool alive() const { return answered > 0; }
};

struct RankStatus {
  uint32_t rank = 0;
  ProcessState state = ProcessState::kGone;
  bool finalized = false;  // it called MPI_Finalize
  std::optional<std::chrono::milliseconds> report_age;  // since its agent's last report
  std::string current_operation;
  // The signal its agent said it is ending by (0: none); see RankEnding.
  int ending_signal = 0;
  // What /proc says of its progress when its report is late (RankCondition):
  // the CPU time all its threads used, and how long ago a look by its
  // node's daemon last found that grown. nullopt: unknown, or never seen
  // to grow.
  std::optional<std::chrono::microseconds> cpu_time;
  std::optional<std::chrono::milliseconds> cpu_grew_ago;
};

struct StatusFindings {
  bool answered = false;
  double load = 0;         // 1-minute load average per CPU
  bool overloaded = false; // the node says it takes no more symptoms
  std::vector<RankStatus> ranks;  // the job's ranks on that node
  double max_temperature_c = 0;
  bool thermal_alarm = false;
};

struct LogFindings {
  bool answered = false;
  std::vector<std::string> entries;  // one per message, oldest first
  size_t pending = 0;                // of those, not completed
};

class Prober {
 public:
  virtual ~Prober() = default;
  virtual ResponseFindings responseProbe(std::string_view node, size_t attempts) = 0;
  virtual StatusFindings statusProbe(std::string_view job_id, std::string_view node) = 0;
  virtual LogFindings logProbe(std::string_view job_id, std::string_view node, int64_t from_ns, int64_t to_ns) = 0;
};

}  // namespace nk
