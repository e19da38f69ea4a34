#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/app_record.h"
#include "metrics/metrics_writer.h"
#include "metrics/rpc_latencies.h"
#include "node/telemetry_sample.h"

namespace nk {

// The daemon's /metrics page from what its parts hold now, gathered by the
// caller: plain data in, Prometheus text out. Names follow Prometheus'
// conventions (base units, _total counters) and node_exporter's where they
// say the same thing; ours begin with nodekeeper_ (docs/metrics.md).
class NodeMetrics {
 public:
  // A count by kind (a symptom's, a fault's), kinds named as the CLI names them.
  struct KindCount {
    std::string kind;
    uint64_t count = 0;
  };

  struct TaskTotals {
    uint64_t sessions_opened = 0;
    uint64_t sessions_live = 0;
    uint64_t batches_received = 0;
    uint64_t batches_unrecorded = 0;
    uint64_t batches_refused = 0;
    uint64_t events = 0;
  };

  struct Snapshot {
    std::shared_ptr<const TelemetrySample> telemetry;  // may be null (nothing sampled yet)
    std::vector<AppRecord> apps;
    TaskTotals tasks;
    std::vector<KindCount> symptoms;  // every kind, zeros included
    uint64_t symptoms_evicted = 0;
    std::vector<KindCount> faults;
    const RpcLatencies* rpc = nullptr;
    std::string version;
    std::string node_name;
    std::string profile;  // the emulated node's; empty on hardware
    double start_time_seconds = 0;  // since the epoch
  };

  // Apps past this many are left off the page (the app count says how
  // many there are): each adds a handful of series to every scrape.
  static constexpr size_t kMaxApps = 4096;
  // Program names are cut here: a label is a name, not a command line.
  static constexpr size_t kMaxProgramBytes = 64;

  static std::string render(const Snapshot& snapshot);
  static void write(const Snapshot& snapshot, MetricsWriter& out);
};

}  // namespace nk
