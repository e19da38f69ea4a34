#pragma once

#include <string>

#include "metrics/node_metrics.h"

namespace nk {

class NodeController;
class AppRegistry;
class SessionRegistry;
class SymptomStore;
class FaultReportLog;
class RpcLatencies;

// Gathers the daemon's parts into NodeMetrics' snapshot for each scrape:
// reads what they hold now (the sampler's latest sample, the registries'
// counts), never the hardware, and builds no task graph.
class DaemonMetrics {
 public:
  struct Sources {
    NodeController& node;
    AppRegistry& apps;
    SessionRegistry& sessions;
    SymptomStore& symptoms;
    FaultReportLog& faults;
    const RpcLatencies& rpc;
    std::string version;
    std::string node_name;
    std::string profile;
  };

  explicit DaemonMetrics(Sources sources);

  NodeMetrics::Snapshot snapshot() const;
  std::string render() const { return NodeMetrics::render(snapshot()); }

 private:
  Sources sources_;
  double start_time_seconds_;
};

}  // namespace nk
