#include "metrics/node_metrics.h"

#include <algorithm>
#include <string_view>

namespace nk {

namespace {

using Type = MetricsWriter::Type;
using Label = MetricsWriter::Label;

constexpr double kHzPerKhz = 1000.0;
constexpr double kWattsPerMw = 0.001;

void writeBuildInfo(const NodeMetrics::Snapshot& s, MetricsWriter& out) {
  out.family("nodekeeper_build_info", Type::kGauge,
             "Always 1; the daemon's version, node name and emulated profile (empty on hardware) as labels.");
  out.sample("nodekeeper_build_info", {{"version", s.version}, {"node", s.node_name}, {"profile", s.profile}}, 1);
  out.family("process_start_time_seconds", Type::kGauge, "Start time of the daemon since the Unix epoch in seconds.");
  out.sample("process_start_time_seconds", s.start_time_seconds);
}

void writeCores(const TelemetrySample& t, MetricsWriter& out) {
  std::vector<std::string> cpu(t.cores.size()), package(t.cores.size());
  for (size_t i = 0; i < t.cores.size(); ++i) {
    cpu[i] = std::to_string(t.cores[i].id);
    package[i] = std::to_string(t.cores[i].package);
  }
  auto perCore = [&](std::string_view name, std::string_view help, auto value) {
    out.family(name, Type::kGauge, help);
    for (size_t i = 0; i < t.cores.size(); ++i)
      out.sample(name, {{"cpu", cpu[i]}, {"package", package[i]}}, value(t.cores[i]));
  };
  perCore("nodekeeper_cpu_scaling_frequency_hertz", "Current scaled CPU frequency of the core (cpufreq).",
          [](const CoreSample& c) { return static_cast<double>(c.cur_khz) * kHzPerKhz; });
  perCore("nodekeeper_cpu_scaling_frequency_min_hertz", "Lowest frequency the core's cpufreq policy allows now.",
          [](const CoreSample& c) { return static_cast<double>(c.min_khz) * kHzPerKhz; });
  perCore("nodekeeper_cpu_scaling_frequency_max_hertz", "Highest frequency the core's cpufreq policy allows now.",
          [](const CoreSample& c) { return static_cast<double>(c.max_khz) * kHzPerKhz; });
  perCore("nodekeeper_cpu_temperature_celsius", "Temperature of the core (NaN when its sensor is not read).",
          [](const CoreSample& c) { return c.temperature_c; });
}

void writePackages(const TelemetrySample& t, MetricsWriter& out) {
  std::vector<std::string> package(t.packages.size());
  for (size_t i = 0; i < t.packages.size(); ++i) package[i] = std::to_string(t.packages[i].id);
  auto perPackage = [&](std::string_view name, Type type, std::string_view help, auto value) {
    out.family(name, type, help);
    for (size_t i = 0; i < t.packages.size(); ++i) out.sample(name, {{"package", package[i]}}, value(t.packages[i]));
  };
  perPackage("nodekeeper_package_power_watts", Type::kGauge,
             "Power the package draws (RAPL), averaged over the telemetry interval.",
             [](const PackageSample& p) { return p.power_w; });
  perPackage("nodekeeper_package_energy_joules_total", Type::kCounter,
             "Energy the package used since the daemon started (RAPL, wraparounds accounted for).",
             [](const PackageSample& p) { return p.energy_j; });
  perPackage("nodekeeper_package_power_limit_watts", Type::kGauge,
             "The package's RAPL power limit (long term), whether enforced or not.",
             [](const PackageSample& p) { return p.power_limit_w; });
  perPackage("nodekeeper_package_power_limit_enabled", Type::kGauge, "1 if the package's RAPL power limit is enforced.",
             [](const PackageSample& p) { return p.power_limit_enabled ? 1.0 : 0.0; });
  perPackage("nodekeeper_package_temperature_celsius", Type::kGauge,
             "Temperature of the package (NaN when its sensor is not read).",
             [](const PackageSample& p) { return p.temperature_c; });
  out.family("nodekeeper_node_power_watts", Type::kGauge, "Power of every package together.");
  out.sample("nodekeeper_node_power_watts", t.node_power_w);
  out.family("nodekeeper_node_energy_joules_total", Type::kCounter,
             "Energy of every package together since the daemon started.");
  out.sample("nodekeeper_node_energy_joules_total", t.node_energy_j);
}

void writeApps(const std::vector<AppRecord>& apps, MetricsWriter& out) {
  out.family("nodekeeper_apps", Type::kGauge, "Apps registered with the daemon (all of them, listed or not).");
  out.sample("nodekeeper_apps", static_cast<double>(apps.size()));
  const size_t listed = std::min(apps.size(), NodeMetrics::kMaxApps);
  std::vector<std::string> pid(listed);
  std::vector<std::string_view> program(listed);
  for (size_t i = 0; i < listed; ++i) {
    pid[i] = std::to_string(apps[i].pid);
    program[i] = std::string_view(apps[i].name).substr(0, NodeMetrics::kMaxProgramBytes);
  }
  auto perApp = [&](std::string_view name, std::string_view help, auto value, Type type = Type::kGauge) {
    out.family(name, type, help);
    for (size_t i = 0; i < listed; ++i) {
      const double v = value(apps[i]);
      if (v >= 0) out.sample(name, {{"pid", pid[i]}, {"program", program[i]}}, v);
    }
  };
  // The app's job as a label of its own series, Prometheus' info pattern:
  // joined by pid where wanted, so that the other series keep one identity
  // when a rank that registers late gives the app its job.
  out.family("nodekeeper_app_info", Type::kGauge, "Always 1: the app's job (empty: none).");
  for (size_t i = 0; i < listed; ++i) {
    const std::string_view job = std::string_view(apps[i].job_id).substr(0, NodeMetrics::kMaxProgramBytes);
    out.sample("nodekeeper_app_info", {{"pid", pid[i]}, {"program", program[i]}, {"job_id", job}}, 1);
  }
  // A budget of 0 is none: no sample, rather than a budget of 0 W.
  constexpr double kNone = -1;
  perApp("nodekeeper_app_power_watts", "Power the energy manager attributes to the app at its last step.",
         [](const AppRecord& a) { return static_cast<double>(a.measured_power_mw) * kWattsPerMw; });
  perApp("nodekeeper_app_power_budget_watts", "The app's power budget (absent: none).", [](const AppRecord& a) {
    return a.power_budget_mw ? static_cast<double>(a.power_budget_mw) * kWattsPerMw : kNone;
  });
  perApp("nodekeeper_app_effective_power_budget_watts",
         "The budget the energy manager applies after the node's cap and sharing (absent: none).",
         [](const AppRecord& a) {
           return a.effective_budget_mw ? static_cast<double>(a.effective_budget_mw) * kWattsPerMw : kNone;
         });
  perApp("nodekeeper_app_energy_joules_total",
         "Energy of the packages attributed to the app by its CPU time on their cores, since it registered.",
         [](const AppRecord& a) { return a.energy_j; }, Type::kCounter);
  perApp("nodekeeper_app_threads", "Threads the app registered.",
         [](const AppRecord& a) { return static_cast<double>(a.threads.size()); });
  perApp("nodekeeper_app_decided_threads",
         "Thread count the daemon decided for the app's next parallel region (0: none yet).",
         [](const AppRecord& a) { return static_cast<double>(a.decision.thread_count); });
}

void writeTasks(const NodeMetrics::TaskTotals& t, MetricsWriter& out) {
  auto counter = [&](std::string_view name, std::string_view help, uint64_t value) {
    out.family(name, Type::kCounter, help);
    out.sample(name, static_cast<double>(value));
  };
  counter("nodekeeper_task_sessions_opened_total", "Task sessions opened (one per publishing app).",
          t.sessions_opened);
  out.family("nodekeeper_task_sessions_live", Type::kGauge, "Task sessions whose app is still publishing.");
  out.sample("nodekeeper_task_sessions_live", static_cast<double>(t.sessions_live));
  counter("nodekeeper_task_batches_received_total", "Batches of task events the daemon took from apps.",
          t.batches_received);
  counter("nodekeeper_task_batches_unrecorded_total",
          "Batches taken while their session was not recording (quota reached, or the recording failed): in the "
          "live graph, not on disk.",
          t.batches_unrecorded);
  counter("nodekeeper_task_batches_refused_total",
          "Batches of task events the daemon refused (malformed) or could not keep; their events are lost.",
          t.batches_refused);
  counter("nodekeeper_task_events_total", "Task events taken into the sessions' task graphs.", t.events);
}

void writeKinds(std::string_view name, std::string_view help, const std::vector<NodeMetrics::KindCount>& counts,
                MetricsWriter& out) {
  out.family(name, Type::kCounter, help);
  for (const auto& c : counts) out.sample(name, {{"kind", c.kind}}, static_cast<double>(c.count));
}

}  // namespace

void NodeMetrics::write(const Snapshot& s, MetricsWriter& out) {
  writeBuildInfo(s, out);
  if (s.telemetry) {
    writeCores(*s.telemetry, out);
    writePackages(*s.telemetry, out);
  }
  writeApps(s.apps, out);
  writeTasks(s.tasks, out);
  writeKinds("nodekeeper_symptoms_total", "Symptoms of MPI jobs the daemon received, by kind.", s.symptoms, out);
  out.family("nodekeeper_symptoms_evicted_total", Type::kCounter,
             "Symptoms the daemon's bounded store let go of, oldest first (still counted above).");
  out.sample("nodekeeper_symptoms_evicted_total", static_cast<double>(s.symptoms_evicted));
  writeKinds("nodekeeper_faults_total", "Faults this daemon localised and published as a job's root, by kind.",
             s.faults, out);
  if (s.rpc) s.rpc->write(out);
}

std::string NodeMetrics::render(const Snapshot& snapshot) {
  MetricsWriter out;
  // About 60 bytes a sample: a page of 96 cores and a thousand apps is
  // some 400 KiB, grown once instead of doubling its way there.
  size_t cores = snapshot.telemetry ? snapshot.telemetry->cores.size() : 0;
  out.reserve(8192 + cores * 4 * 90 + std::min(snapshot.apps.size(), kMaxApps) * 5 * 110);
  write(snapshot, out);
  return out.take();
}

}  // namespace nk
