#include "daemon_metrics.h"

#include <fstream>
#include <sstream>
#include <unistd.h>

#include "apps/app_registry.h"
#include "faults/fault_report_log.h"
#include "faults/symptom_store.h"
#include "metrics/rpc_latencies.h"
#include "node/node_controller.h"
#include "tasks/session_registry.h"

namespace nk {

namespace {

// When this process started, from /proc (as client libraries report
// process_start_time_seconds): the kernel's boot time plus the process's
// start in clock ticks after boot.
double processStartTimeSeconds() {
  double boot_time = 0;
  {
    std::ifstream stat("/proc/stat");
    for (std::string line; std::getline(stat, line);)
      if (line.rfind("btime ", 0) == 0) boot_time = std::stod(line.substr(6));
  }
  std::ifstream self("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  // Fields after the command's closing parenthesis; starttime is field 22.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || boot_time == 0) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return boot_time + std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return 0;
}

}  // namespace

DaemonMetrics::DaemonMetrics(Sources sources)
    : sources_(std::move(sources)), start_time_seconds_(processStartTimeSeconds()) {}

NodeMetrics::Snapshot DaemonMetrics::snapshot() const {
  NodeMetrics::Snapshot s;
  s.telemetry = sources_.node.telemetry().latest();
  s.apps = sources_.apps.list();
  const SessionRegistry::Totals tasks = sources_.sessions.totals();
  s.tasks = {.sessions_opened = tasks.sessions_opened,
             .sessions_live = tasks.sessions_live,
             .batches_received = tasks.batches_received,
             .batches_unrecorded = tasks.batches_unrecorded,
             .batches_refused = tasks.batches_refused,
             .events = tasks.events};
  const auto symptoms = sources_.symptoms.appendedByKind();
  for (size_t kind = 0; kind < symptoms.size(); ++kind)
    s.symptoms.push_back({std::string(symptomKindName(static_cast<SymptomKind>(kind))), symptoms[kind]});
  s.symptoms_evicted = sources_.symptoms.dropped();
  const auto faults = sources_.faults.publishedByKind();
  for (size_t kind = 0; kind < faults.size(); ++kind)
    s.faults.push_back({std::string(faultKindName(static_cast<FaultKind>(kind))), faults[kind]});
  s.rpc = &sources_.rpc;
  s.version = sources_.version;
  s.node_name = sources_.node_name;
  s.profile = sources_.profile;
  s.start_time_seconds = start_time_seconds_;
  return s;
}

}  // namespace nk
