#include "daemon.h"

#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <grpcpp/grpcpp.h>
#include <thread>

#include "api/apps_service_impl.h"
#include "api/metrics_http_server.h"
#include "api/rpc_latency_interceptor.h"
#include "daemon_metrics.h"
#include "metrics/rpc_latencies.h"
#include "api/fault_tree_service_impl.h"
#include "api/faults_service_impl.h"
#include "api/jobs_service_impl.h"
#include "api/grpc_peer_network.h"
#include "api/peer_listener.h"
#include "api/peer_token.h"
#include "api/peer_transport.h"
#include "api/stream_host.h"
#include "api/node_service_impl.h"
#include "apps/app_registry.h"
#include "apps/energy_manager.h"
#include "apps/job_app_terms.h"
#include "apps/node_power_cap.h"
#include "apps/proc_process_inspector.h"
#include "base/clock.h"
#include "energy/policy_registry.h"
#include "faults/fault_report_log.h"
#include "faults/fault_tree_coordinator.h"
#include "faults/message_log_probe.h"
#include "faults/scheduling_delay.h"
#include "faults/job_registry.h"
#include "faults/rule_file_parser.h"
#include "faults/proc_process_state_reader.h"
#include "faults/symptom_record.h"
#include "faults/symptom_store.h"
#include "api/unix_socket_server.h"
#include "node/access_policy.h"
#include "node/node_controller.h"
#include "platform/cpu_pressure.h"
#include "platform/thread_priority.h"
#include "nodekeeper/v1/apps.grpc.pb.h"
#include "api/tasks_service_impl.h"
#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "tasks/session_registry.h"
#include "platform/emulated/emulated_node.h"
#include "platform/emulated/node_profile.h"
#include "platform/hwloc_topology.h"
#include "platform/hwmon_thermal.h"
#include "platform/libsensors_thermal.h"
#include "platform/sched_thread_affinity.h"
#include "platform/sysfs_cpu_freq.h"
#include "platform/sysfs_rapl.h"
#include "platform/trusted_directory.h"

namespace nk {

namespace {

// Creates the directory if absent, and refuses one another user could
// write into (or swap): the daemon is root, and reads back what it finds
// there (TrustedDirectory).
Status makeTrustedDirectory(const std::filesystem::path& dir, const char* what) {
  auto opened = TrustedDirectory::openOrCreate(dir);
  if (!opened) return Error{opened.error().code, std::string("untrusted ") + what + ": " + opened.error().message};
  return {};
}

Result<NodeProfile> resolveProfile(const std::string& name_or_path) {
  if (name_or_path.empty() || name_or_path == "xeon-e5-2630") return NodeProfile::xeonE5_2630();
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".toml"))
    return NodeProfile::load(name_or_path);
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("NK_PROFILES_DIR")) dirs.emplace_back(env);
  dirs.emplace_back(NK_PROFILES_DIR_INSTALLED);
  dirs.emplace_back(NK_PROFILES_DIR_SOURCE);
  std::string searched;
  for (const auto& dir : dirs) {
    auto candidate = dir / (name_or_path + ".toml");
    std::error_code ec;
    if (std::filesystem::exists(candidate, ec)) return NodeProfile::load(candidate);
    searched += (searched.empty() ? "" : ", ") + dir.string();
  }
  return notFound("no profile named '" + name_or_path + "' (looked in " + searched +
                  "; give a path to a .toml file, or use xeon-e5-2630)");
}

// A core or package at this temperature raises a thermal alarm: 5 C below
// the usual TjMax of 100 C, where the processor starts to throttle itself.
constexpr double kThermalAlarmC = 95.0;

Result<std::shared_ptr<const FaultRuleBase>> loadFaultRules(const std::filesystem::path& path) {
  if (path.empty()) return std::make_shared<const FaultRuleBase>(RuleFileParser::builtIn());
  auto rules = RuleFileParser::load(path.string());
  if (!rules) return rules.error();
  return std::make_shared<const FaultRuleBase>(std::move(*rules));
}

// The 1-minute load average per CPU, for the status probe.
double loadPerCpu() {
  std::ifstream in("/proc/loadavg");
  double load = 0;
  if (!(in >> load)) return 0;
  unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  return load / cpus;
}

std::string hostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// libsensors reads the host's own /sys only; under another root (an
// emulated node, a test tree), and where libsensors fails, hwmon is read
// directly.
std::unique_ptr<ThermalSensors> openThermalSensors(const std::filesystem::path& sysfs_root) {
  if (sysfs_root != "/") return std::make_unique<HwmonThermal>(sysfs_root);
  auto sensors = LibsensorsThermal::create();
  if (sensors) return std::move(*sensors);
  Logger::warning("libsensors unavailable (" + sensors.error().message + "); reading hwmon directly");
  return std::make_unique<HwmonThermal>(sysfs_root);
}

// What this node tells its fault localisation node with each heartbeat.
FaultTreeCoordinator::NodeState nodeStateOf(NodeController& node) {
  FaultTreeCoordinator::NodeState state;
  state.load = loadPerCpu();
  if (auto sample = node.telemetry().latest()) {
    for (const auto& core : sample->cores)
      if (!std::isnan(core.temperature_c)) state.max_temperature_c = std::max(state.max_temperature_c, core.temperature_c);
    for (const auto& package : sample->packages)
      if (!std::isnan(package.temperature_c))
        state.max_temperature_c = std::max(state.max_temperature_c, package.temperature_c);
  }
  state.thermal_alarm = state.max_temperature_c >= kThermalAlarmC;
  return state;
}

void logFault(const FaultRecord& fault) {
  std::string evidence;
  for (const auto& e : fault.evidence) evidence += (evidence.empty() ? "" : "\n") + e;
  char after[32];
  std::snprintf(after, sizeof after, "%.3f", fault.detectedAfterS());
  Logger::error("fault: " + fault.describe(), {{"JOB_ID", fault.job_id},
                                               {"FAULT_ID", std::to_string(fault.fault_id)},
                                               {"FAULT_KIND", std::string(faultKindName(fault.kind))},
                                               {"FAULT_NODE", fault.node},
                                               {"FAULT_RANKS", formatRankList(fault.ranks)},
                                               {"DETECTED_AFTER_S", after},
                                               {"LOCALISED_BY", fault.localised_by},
                                               {"EVIDENCE", evidence}});
}

void logSymptom(const SymptomRecord& symptom) {
  Logger::warning(symptom.describe(),
                  {{"JOB_ID", symptom.job_id},
                   {"SYMPTOM_ID", std::to_string(symptom.symptom_id)},
                   {"SYMPTOM_KIND", std::string(symptomKindName(symptom.kind))},
                   {"REPORTER", std::to_string(symptom.reporter_rank) + "@" + symptom.reporter_node},
                   {"SUSPECT_RANKS", formatRankList(symptom.suspect_ranks)},
                   {"SUSPECT_NODE", symptom.suspect_node},
                   {"MPI_OPERATION", symptom.operation}});
}

}  // namespace

void Daemon::blockSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

Result<std::unique_ptr<Daemon>> Daemon::start(const DaemonOptions& options) {
  auto daemon = std::make_unique<Daemon>(PrivateTag{});
  daemon->options_ = options;
  ThreadPriority::setRefusalLog([](const std::string& message) { Logger::debug(message); });
  daemon->node_name_ = options.node_name.empty() ? hostName() : options.node_name;
  // Both directories before anything is read or touched: a state or socket
  // directory another user can write stops the start with one line.
  if (Status s = makeTrustedDirectory(options.state_dir, "state directory"); !s) return s.error();
  if (options.socket_path.has_parent_path()) {
    if (Status s = makeTrustedDirectory(options.socket_path.parent_path(), "socket directory"); !s) return s.error();
  }
  if (Status s = UnixSocketServer::checkPath(options.socket_path); !s) return s.error();
  // The peer token and the fault rules first: a bad file stops the start
  // before anything is touched.
  if (Status s = daemon->loadPeerToken(); !s) return s.error();
  if (Status s = daemon->loadPeerTls(); !s) return s.error();
  auto rules = loadFaultRules(options.fault_rules_file);
  if (!rules) return rules.error();
  Logger::info("fault rules: " + std::to_string((*rules)->rules.size()) + " rules from " + (*rules)->source,
               {{"FAULT_RULES", (*rules)->source}});

  if (Status s = daemon->openNode(); !s) return s.error();
  daemon->restoreControlsLeftSaved();
  daemon->buildAccessPolicy();
  daemon->streams_ = std::make_unique<StreamHost>(options.stream_limits, [](const std::string& message) {
    Logger::warning(message);
  });
  daemon->buildNodeService();
  daemon->buildApps();
  daemon->buildTaskService();
  daemon->startFaultTree(*rules);
  daemon->startEnergyManager();  // after the job registry: it charges jobs their energy
  daemon->buildFaultServices();
  if (Status s = daemon->startPeerListener(); !s) return s.error();
  if (Status s = daemon->startMetricsServer(); !s) return s.error();
  if (Status s = daemon->startSocketServer(); !s) return s.error();
  return daemon;
}

Status Daemon::loadPeerToken() {
  peer_token_ = std::make_unique<PeerToken>();
  if (options_.peer_token_file.empty()) return {};
  auto token = PeerToken::load(options_.peer_token_file);
  if (!token) return token.error();
  *peer_token_ = std::move(*token);
  return {};
}

// The certificate, key and CA of mutual TLS, read and checked; without
// them peer traffic is in clear, which the log says where there is any.
Status Daemon::loadPeerTls() {
  if (!options_.peerTls()) {
    peer_transport_ = std::make_shared<PeerTransport>();
    if (!options_.listen_address.empty() || !options_.peer_token_file.empty())
      Logger::warning("peer traffic is in clear: the peer token and the fault tree's messages cross the network "
                      "readable and replayable; give --peer-cert, --peer-key and --peer-ca for mutual TLS");
    return {};
  }
  auto files = checkedPeerTlsFiles();
  if (!files) return files.error();
  auto copies = PeerTlsCopies::open(options_.state_dir / "peer-tls");
  if (!copies) return copies.error();
  auto transport = PeerTransport::overMutualTls(std::move(*files), std::move(*copies));
  if (!transport) return transport.error();
  peer_transport_ = std::move(*transport);
  Logger::info("peers over mutual TLS: " + peer_transport_->describe(),
               {{"PEER_CERT", options_.peer_cert_file.string()}, {"PEER_CA", options_.peer_ca_file.string()}});
  return {};
}

Result<PeerTlsFiles> Daemon::checkedPeerTlsFiles() const {
  auto files = PeerTlsFiles::load({options_.peer_cert_file, options_.peer_key_file, options_.peer_ca_file});
  if (!files) return files.error();
  // Over TLS a peer is who its certificate names: the others take this
  // node's heartbeats only if that is the node's own name.
  if (files->commonName() != node_name_)
    return invalidArgument("--peer-cert " + options_.peer_cert_file.string() + " names node '" + files->commonName() +
                           "' (its CN), but this node is '" + node_name_ +
                           "' (--node-name, or the host name): peers would refuse its heartbeats; give this node's "
                           "own certificate, or --node-name " + files->commonName());
  return files;
}

// SIGHUP: the certificate, key and CA again, from the same paths (a renewed
// certificate is written over the old one). Files with an error leave those
// in force as they were: a half-done renewal must not cut the node off.
void Daemon::reloadPeerTls() {
  if (!peer_transport_ || !peer_transport_->mutualTls()) return;
  auto files = checkedPeerTlsFiles();
  if (!files) {
    Logger::error("SIGHUP: keeping the peer certificate in force (" + peer_transport_->describe() +
                      "): " + files.error().message,
                  {{"PEER_CERT", options_.peer_cert_file.string()}});
    return;
  }
  if (Status s = peer_transport_->replace(std::move(*files)); !s) {
    Logger::error("SIGHUP: keeping the peer certificate in force: " + s.error().message,
                  {{"PEER_CERT", options_.peer_cert_file.string()}});
    return;
  }
  Logger::info("SIGHUP: reloaded the peer certificate, key and CA: " + peer_transport_->describe() +
                   "; new connections use them within " +
                   std::to_string(PeerTransport::kPickedUpWithin.count()) + " s, those up keep theirs",
               {{"PEER_CERT", options_.peer_cert_file.string()}, {"PEER_CA", options_.peer_ca_file.string()}});
}

// The node controller over this host's hardware, or over an emulated node
// started here.
Status Daemon::openNode() {
  NodeController::Parts parts;
  std::filesystem::path sysfs_root = options_.sysfs_root;
  if (options_.emulate) {
    auto topology = startEmulatedNode();
    if (!topology) return topology.error();
    parts.topology = std::move(*topology);
    sysfs_root = emulated_->sysfsRoot();
  } else {
    auto topology = HwlocTopology::fromHost();
    if (!topology) return topology.error();
    parts.topology = std::move(*topology);
  }
  parts.cpufreq = std::make_unique<SysfsCpuFreq>(sysfs_root);
  parts.meter = std::make_unique<SysfsRapl>(sysfs_root);
  parts.thermal = openThermalSensors(sysfs_root);
  parts.host_load = std::make_unique<HostCpuLoad>("/");
  parts.saved_controls_file = options_.state_dir / "saved-controls.json";
  parts.telemetry_interval = std::chrono::milliseconds(options_.telemetry_interval_ms);
  auto node = NodeController::create(std::move(parts));
  if (!node) return node.error();
  node_ = std::move(*node);
  return {};
}

// Starts the emulated node of the profile the options name; returns its
// topology with each core on the host CPU that runs it.
Result<NodeTopology> Daemon::startEmulatedNode() {
  auto profile = resolveProfile(options_.profile);
  if (!profile) return profile.error();
  profile_name_ = profile->name;
  auto topology = HwlocTopology::fromSynthetic(profile->hwlocSynthetic());
  if (!topology) return topology.error();
  EmulatedNode::Options emulation;
  emulation.state_dir = options_.state_dir;
  emulation.model_file = options_.state_dir / "emulator-model.txt";
  emulation.ignore_host_load = options_.emulate_ignore_host_load;
  auto node = EmulatedNode::start(*profile, emulation);
  if (!node) return node.error();
  emulated_ = std::move(*node);
  topology->cpu_model = profile->cpu_model;
  for (auto& core : topology->cores) {
    core.host_cpus = {emulated_->hostCpuOf(core.id)};
    // The emulated kernel numbers cores inside each package (its coretemp
    // says "Core 0".."Core N-1" per package), whatever hwloc's synthetic
    // numbering says.
    core.os_core_id = core.core_id;
  }
  const std::string sysfs_root = emulated_->sysfsRoot().string();
  Logger::info("emulating " + profile->name + " (" + std::to_string(profile->cores()) + " cores) under " + sysfs_root,
               {{"PROFILE", profile->name}, {"SYSFS_ROOT", sysfs_root}});
  return std::move(*topology);
}

void Daemon::restoreControlsLeftSaved() {
  if (!node_->hasSavedControls()) return;
  auto restored = node_->restoreSavedControls();
  if (restored)
    Logger::warning("restored " + std::to_string(*restored) + " controls left saved by a run that did not stop cleanly",
                    {{"RESTORED", std::to_string(*restored)}});
  else
    Logger::error("could not restore controls saved by a previous run: " + restored.error().message);
}

void Daemon::buildAccessPolicy() {
  std::optional<gid_t> admin_gid;
  // A group named in the config or on the command line that does not exist
  // was refused before the start (DaemonOptions); the default one may be
  // missing where sysusers.d has not run.
  if (group* g = getgrnam(options_.admin_group.c_str()))
    admin_gid = g->gr_gid;
  else
    Logger::warning("admin group '" + options_.admin_group + "' does not exist: only root may change node-wide settings",
                    {{"ADMIN_GROUP", options_.admin_group}});
  std::set<uid_t> extra_admins;
  // Whoever runs an unprivileged emulated node owns it.
  if (options_.emulate && getuid() != 0) extra_admins.insert(getuid());
  access_ = std::make_unique<AccessPolicy>(admin_gid, extra_admins);
}

void Daemon::buildNodeService() {
  NodeServiceImpl::Info info{hostName(), options_.emulate, profile_name_};
  services_.push_back(std::make_unique<NodeServiceImpl>(*node_, *access_, *streams_, info));
}

void Daemon::buildApps() {
  AppRegistry::Options registry;
  NodeController* node = node_.get();
  registry.node_power_cap_mw = [node]() -> std::optional<uint64_t> {
    auto zones = node->powerCaps();
    if (!zones) return std::nullopt;
    return NodePowerCap::sumMw(*zones);
  };
  registry.default_max_threads = static_cast<uint32_t>(node_->topology().cores.size());
  for (std::string_view name : PolicyRegistry::names()) registry.policies.emplace_back(name);
  // Only the emulated node knows its power model; on hardware no floor is
  // estimated yet (a budget is never called unattainable on a guess).
  if (EmulatedNode* emulated = emulated_.get())
    registry.budget_floor = BudgetFloor(
        [emulated](uint32_t busy_cores) -> std::optional<double> { return emulated->powerAtLowestClockW(busy_cores); });
  // Set before any app can register (the server starts later); called from
  // the registry's own methods, so job_app_terms_ outlives every call.
  registry.on_removed = [this](const AppRecord& app) {
    if (job_app_terms_) job_app_terms_->appLeft(app);
  };
  apps_ = std::make_unique<AppRegistry>(*access_, std::make_unique<ProcProcessInspector>(), registry);
  // The job registry comes later (startFaultTree); until then no app is in a job.
  job_app_terms_ = std::make_unique<JobAppTerms>(
      *apps_,
      [this](pid_t pid) -> std::optional<JobTerms> {
        if (!jobs_) return std::nullopt;
        std::optional<std::string> id = jobs_->jobOfProcess(pid);
        if (!id) return std::nullopt;
        std::optional<JobRecord> job = jobs_->job(*id);
        if (!job || job->end != JobEnd::kRunning) return std::nullopt;
        return JobTerms{job->job_id, job->settings.power_budget_mw, job->settings.policy};
      },
      [](const std::string& message) { Logger::warning(message); });
  services_.push_back(std::make_unique<AppsServiceImpl>(*apps_, *access_, *streams_, job_app_terms_.get()));
}

void Daemon::startEnergyManager() {
  EnergyManager::Options energy;
  energy.config = options_.energy;
  energy.use_perf = !options_.emulate;
  energy.waiting_is_work = options_.emulate;
  energy.foreign_load_counts = !options_.emulate_ignore_host_load;
  if (EmulatedNode* emulated = emulated_.get()) {
    energy.report_core_load = [emulated](uint32_t core, double load) { emulated->setExtraUtilisation(core, load); };
    energy.on_active = [emulated](bool active) { emulated->setHostLoadEnabled(!active); };
  }
  // The emulated packages' energy comes from the app loads the manager
  // reports alone while it drives the node (host load is off then): other
  // processes on the host used no emulated core.
  energy.attribute_foreign_use = !options_.emulate;
  energy.job_of_process = [jobs = jobs_.get()](pid_t pid) { return jobs->jobOfProcess(pid).value_or(""); };
  energy.job_membership_generation = [jobs = jobs_.get()] { return jobs->membershipGeneration(); };
  energy.charge_job = [jobs = jobs_.get()](const std::string& job, const std::string& program, double joules) {
    jobs->addEnergy(job, joules, program);
  };
  energy.log_info = [](const std::string& message) { Logger::info(message); };
  energy.log_warning = [](const std::string& message) { Logger::warning(message); };
  // Set only at debug level: the loops then skip building lines nobody keeps.
  if (options_.log_level == LogLevel::kDebug)
    energy.log_debug = [](const std::string& message) { Logger::debug(message); };
  energy_ = std::make_unique<EnergyManager>(*apps_, *node_, std::make_unique<SchedThreadAffinity>(), energy);
  energy_->start();
}

void Daemon::buildTaskService() {
  SessionRegistry::Options recordings;
  recordings.limits = options_.recording_limits;
  recordings.graph_max_tasks = options_.task_graph_tasks;
  recordings.log_info = [](const std::string& message) { Logger::info(message); };
  recordings.log_warning = [](const std::string& message) { Logger::warning(message); };
  // The real host's CPUs, on an emulated node too: what the builder would
  // take time from is the programs running here.
  recordings.host_cpu_use = [load = std::make_shared<HostCpuLoad>("/")]() -> std::optional<SpareCpuWatch::Sample> {
    auto per_cpu = load->sample();
    if (!per_cpu || per_cpu->empty()) return std::nullopt;
    SpareCpuWatch::Sample sample;
    sample.cpus = static_cast<double>(per_cpu->size());
    for (double busy : *per_cpu) sample.busy_cpus += busy;
    return sample;
  };
  sessions_ = std::make_unique<SessionRegistry>(options_.state_dir / "recordings", std::move(recordings));
  // What an earlier run left past its age or over a quota goes now, not
  // at the first session.
  sessions_->sweep();
  services_.push_back(
      std::make_unique<TasksServiceImpl>(*sessions_, *access_, *streams_, options_.max_message_bytes,
                                         std::chrono::seconds(options_.debug_grace_s)));
}

void Daemon::startFaultTree(std::shared_ptr<const FaultRuleBase> rules) {
  process_states_ = std::make_unique<ProcProcessStateReader>();
  jobs_ = std::make_unique<JobRegistry>(*process_states_);
  symptoms_ = std::make_unique<SymptomStore>();
  // How late this host runs threads: the fault tree's thread measures it,
  // and its timeouts and the peer network's deadlines grow with it.
  auto scheduling_delay = std::make_shared<SchedulingDelay>();
  GrpcPeerNetwork::Options peers;
  peers.heartbeat_deadline = std::chrono::milliseconds(options_.tree_heartbeat_ms);
  peers.delay_factor = [scheduling_delay] { return scheduling_delay->factor(); };
  peers.sender_delay_factor = [scheduling_delay] { return scheduling_delay->threadFactor(); };
  peers.transport = peer_transport_;
  peer_network_ = std::make_unique<GrpcPeerNetwork>(*peer_token_, peers);
  fault_reports_ = std::make_unique<FaultReportLog>();
  FaultTreeCoordinator::Options tree;
  tree.localiser.heartbeat_period = std::chrono::milliseconds(options_.tree_heartbeat_ms);
  tree.localiser.heartbeat_misses = options_.tree_heartbeat_misses;
  tree.localiser.clock = wallClockNs;
  tree.fan_out = options_.fault_tree_fan_out;
  tree.scheduling_delay = scheduling_delay;
  tree.cpu_pressure = [pressure = CpuPressure()] { return pressure.someAvg10(); };
  NodeController* node = node_.get();
  tree.node_state = [node] { return nodeStateOf(*node); };
  tree.on_published = logFault;
  tree.symptoms = symptoms_.get();
  tree.log_info = [](const std::string& message) { Logger::info(message); };
  if (options_.log_level == LogLevel::kDebug)
    tree.log_debug = [](const std::string& message) { Logger::debug(message); };
  tree.on_thread_start = [] {
    pthread_setname_np(pthread_self(), "nk-fault-tree");
    ThreadPriority::raiseLatencyBound("nk-fault-tree");
  };
  // Probes about this node are answered here, its logs read as a peer's
  // LogProbe would (FaultTreeServiceImpl's MessageLogProbe reads the same).
  auto own_logs = std::make_shared<const MessageLogProbe>(*jobs_, "/dev/shm",
                                                          [](const std::string& message) { Logger::warning(message); });
  message_logs_ = own_logs;
  tree.local_log_probe = [own_logs](std::string_view job_id, int64_t from_ns, int64_t to_ns) {
    Result<LogFindings> findings = own_logs->probe(job_id, from_ns, to_ns);
    return findings ? *findings : LogFindings{};
  };
  tree.ending_signal_left = [own_logs](pid_t pid, uid_t uid) { return own_logs->endingSignalOf(pid, uid); };
  fault_tree_ = std::make_unique<FaultTreeCoordinator>(node_name_, *jobs_, *peer_network_, *peer_network_,
                                                       *fault_reports_, std::move(rules), tree);
  fault_tree_->start();
}

void Daemon::buildFaultServices() {
  FaultsServiceImpl::Options faults;
  faults.on_symptom = logSymptom;
  faults.log_warning = [](const std::string& message) { Logger::warning(message); };
  faults.node_name = options_.node_name;
  faults.peer_endpoint = options_.listen_address;
  // Other daemons reach this one at its socket; a rank's node list names it
  // the same way, which is how the service tells itself from the others.
  std::error_code absolute_error;
  std::filesystem::path own_socket = std::filesystem::absolute(options_.socket_path, absolute_error);
  if (absolute_error) own_socket = options_.socket_path;
  services_.push_back(std::make_unique<FaultsServiceImpl>(*jobs_, *symptoms_, *access_, "unix:" + own_socket.string(),
                                                          *peer_network_, *fault_tree_, *fault_reports_, *streams_,
                                                          faults));
  services_.push_back(
      std::make_unique<FaultTreeServiceImpl>(*jobs_, *fault_tree_, *peer_token_, *access_, node_name_, message_logs_));
  services_.push_back(std::make_unique<JobsServiceImpl>(*jobs_, *access_));
}

// The daemon-to-daemon fault tree service on TCP, if --listen asks for it.
Status Daemon::startPeerListener() {
  if (options_.listen_address.empty()) return {};
  // A service serves one server: the TCP one gets its own.
  peer_service_ =
      std::make_unique<FaultTreeServiceImpl>(*jobs_, *fault_tree_, *peer_token_, *access_, node_name_, message_logs_);
  auto server = PeerListener::start(options_.listen_address, *peer_service_, *peer_transport_);
  if (!server) return server.error();
  peer_server_ = std::move(*server);
  if (PeerListener::listensOnEveryInterface(options_.listen_address))
    Logger::warning("--listen " + options_.listen_address +
                        " takes peer calls on every interface of this host, from every network it is on; name the "
                        "address of the cluster's network instead (e.g. 10.1.0.7:7400)",
                    {{"LISTEN", options_.listen_address}});
  std::string how;
  if (peer_transport_->mutualTls())
    how = peer_token_->configured() ? "mutual TLS and the peer token required" : "mutual TLS required";
  else
    how = "peer token required, in clear; no health or reflection on TCP";
  Logger::info("serving the fault tree to peers on " + options_.listen_address + " (" + how + ")",
               {{"LISTEN", options_.listen_address}, {"NODE_NAME", node_name_}});
  return {};
}

#ifndef NK_VERSION
#define NK_VERSION "unknown"
#endif

// Prometheus /metrics on 127.0.0.1, if --metrics-port asks for it.
Status Daemon::startMetricsServer() {
  if (!options_.metrics_port) return {};
  rpc_latencies_ = std::make_unique<RpcLatencies>();
  metrics_ = std::make_unique<DaemonMetrics>(DaemonMetrics::Sources{
      *node_, *apps_, *sessions_, *symptoms_, *fault_reports_, *rpc_latencies_, NK_VERSION, node_name_, profile_name_});
  MetricsHttpServer::Options http;
  http.port = *options_.metrics_port;
  http.render = [metrics = metrics_.get()] { return metrics->render(); };
  auto server = MetricsHttpServer::start(std::move(http));
  if (!server) return Error{server.error().code, "--metrics-port (metrics_port): " + server.error().message};
  metrics_server_ = std::move(*server);
  const std::string url = "http://127.0.0.1:" + std::to_string(metrics_server_->port()) + "/metrics";
  Logger::info("serving Prometheus metrics at " + url, {{"METRICS_URL", url}});
  return {};
}

// The Unix socket with every service on it; then systemd hears we are ready.
Status Daemon::startSocketServer() {
  const std::filesystem::path& socket = options_.socket_path;
  std::vector<grpc::Service*> services;
  for (auto& service : services_) services.push_back(service.get());
  UnixSocketServer::Options server_options;
  server_options.limits = options_.connection_limits;
  server_options.max_message_bytes = options_.max_message_bytes;
  server_options.log_warning = [](const std::string& message) { Logger::warning(message); };
  server_options.log_info = [](const std::string& message) { Logger::info(message); };
  if (rpc_latencies_) server_options.interceptors.push_back(std::make_unique<RpcLatencyInterceptor>(*rpc_latencies_));
  auto server = UnixSocketServer::start(socket, services, std::move(server_options));
  if (!server) return server.error();
  server_ = std::move(*server);
  Logger::info("serving on " + socket.string(), {{"SOCKET", socket.string()}});
  sd_notifyf(0, "READY=1\nSTATUS=serving on %s\nMAINPID=%d", socket.c_str(), static_cast<int>(getpid()));
  return {};
}

Daemon::Daemon(PrivateTag) {}

// SIGHUP: the rule file again. A file with an error leaves the rules in
// force as they were: a typo must not switch fault localisation off.
void Daemon::reloadFaultRules() {
  if (options_.fault_rules_file.empty()) {
    Logger::info("SIGHUP: fault rules are the built-in ones (no --fault-rules file); nothing to reload");
    return;
  }
  auto rules = loadFaultRules(options_.fault_rules_file);
  if (!rules) {
    Logger::error("SIGHUP: keeping the fault rules in force: " + rules.error().message,
                  {{"FAULT_RULES", options_.fault_rules_file.string()}});
    return;
  }
  Logger::info("SIGHUP: reloaded " + std::to_string((*rules)->rules.size()) + " fault rules from " +
                   (*rules)->source,
               {{"FAULT_RULES", (*rules)->source}});
  fault_tree_->setRules(*rules);
}

Daemon::~Daemon() { stop(); }

int Daemon::run() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  uint64_t watchdog_usec = 0;
  bool watchdog = sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0;
  timespec timeout{};
  uint64_t wait_usec = watchdog ? watchdog_usec / 2 : 1000000;
  timeout.tv_sec = static_cast<time_t>(wait_usec / 1000000);
  timeout.tv_nsec = static_cast<long>((wait_usec % 1000000) * 1000);
  const int64_t stall_ns = 10 * static_cast<int64_t>(options_.telemetry_interval_ms) * 1000000 + 2000000000LL;
  while (true) {
    int sig = sigtimedwait(&set, nullptr, &timeout);
    if (sig == SIGTERM || sig == SIGINT) {
      Logger::info(std::string("received ") + strsignal(sig) + ", stopping");
      break;
    }
    if (sig == SIGHUP) {
      reloadFaultRules();
      reloadPeerTls();
      continue;
    }
    if (watchdog) {
      // Pet the watchdog only while the sampler makes progress: a wedged
      // daemon should be restarted by systemd, not kept alive by this loop.
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      int64_t now_ns = static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
      if (now_ns - node_->telemetry().lastPeriodicSampleNs() < stall_ns) sd_notify(0, "WATCHDOG=1");
    }
  }
  stop();
  return 0;
}

void Daemon::stop() {
  if (stopped_) return;
  stopped_ = true;
  sd_notify(0, "STOPPING=1");
  if (peer_server_) peer_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  // Its page reads the parts stopped and freed below.
  metrics_server_.reset();
  if (fault_tree_) fault_tree_->stop();
  if (server_) server_->shutdown();
  // Before the node's controls are restored: the manager gives back its
  // cores and pinnings first, so that nothing rewrites them afterwards.
  if (energy_) energy_->stop();
  if (node_) {
    auto restored = node_->restoreSavedControls();
    if (!restored) Logger::error("restoring controls on stop failed: " + restored.error().message);
    else if (*restored > 0) Logger::info("restored " + std::to_string(*restored) + " controls to their original values");
  }
  server_.reset();
  peer_server_.reset();
  peer_service_.reset();
  services_.clear();
  streams_.reset();
  fault_tree_.reset();
  fault_reports_.reset();
  peer_network_.reset();
  peer_token_.reset();
  symptoms_.reset();
  jobs_.reset();
  process_states_.reset();
  energy_.reset();
  apps_.reset();
  node_.reset();
  emulated_.reset();
}

}  // namespace nk
