#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "daemon_options.h"

namespace grpc {
class Server;
class Service;
}

namespace nk {

class EmulatedNode;
class NodeController;
class AccessPolicy;
class AppRegistry;
class JobAppTerms;
class EnergyManager;
class SessionRegistry;
class JobRegistry;
class MessageLogProbe;
class StreamHost;
class SymptomStore;
class PeerToken;
class PeerTransport;
class PeerTlsFiles;
class GrpcPeerNetwork;
class FaultReportLog;
class FaultTreeCoordinator;
class ProcessStateReader;
class NodeServiceImpl;
class UnixSocketServer;
class RpcLatencies;
class DaemonMetrics;
class MetricsHttpServer;
struct FaultRuleBase;
struct NodeTopology;

// The running daemon: the emulated node (if any), the node controller, the
// gRPC server, and the signal/watchdog loop.
class Daemon {
 public:
  // Signals must be blocked before any thread starts so that only the main
  // loop receives them; main() calls this first.
  static void blockSignals();

  static Result<std::unique_ptr<Daemon>> start(const DaemonOptions& options);
  ~Daemon();

  // Serves until SIGTERM or SIGINT; returns the exit code.
  int run();

 private:
  struct PrivateTag {};

 public:
  explicit Daemon(PrivateTag);

 private:
  // The steps of start(), in their order (openNode starts the emulated node).
  Status loadPeerToken();
  Status loadPeerTls();
  Status openNode();
  Result<NodeTopology> startEmulatedNode();
  void restoreControlsLeftSaved();
  void buildAccessPolicy();
  void buildNodeService();
  void buildApps();
  void startEnergyManager();
  void buildTaskService();
  void startFaultTree(std::shared_ptr<const FaultRuleBase> rules);
  void buildFaultServices();
  Status startPeerListener();
  Status startMetricsServer();
  Status startSocketServer();

  void stop();
  void reloadFaultRules();
  void reloadPeerTls();
  Result<PeerTlsFiles> checkedPeerTlsFiles() const;

  DaemonOptions options_;
  std::string node_name_;     // in fault trees: --node-name or the host name
  std::string profile_name_;  // of the emulated node; empty on real hardware
  std::unique_ptr<EmulatedNode> emulated_;
  std::unique_ptr<NodeController> node_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AppRegistry> apps_;
  std::unique_ptr<EnergyManager> energy_;
  std::unique_ptr<SessionRegistry> sessions_;
  std::unique_ptr<ProcessStateReader> process_states_;
  std::unique_ptr<JobRegistry> jobs_;
  // Apps of a scheduler's job get its budget and policy (looked up in jobs_).
  std::unique_ptr<JobAppTerms> job_app_terms_;
  std::unique_ptr<SymptomStore> symptoms_;
  std::unique_ptr<PeerToken> peer_token_;
  std::shared_ptr<PeerTransport> peer_transport_;
  std::unique_ptr<GrpcPeerNetwork> peer_network_;
  std::unique_ptr<FaultReportLog> fault_reports_;
  std::unique_ptr<FaultTreeCoordinator> fault_tree_;
  // The PMPI agents' message logs, read for this node's fault tree and for
  // peers' log probes alike (one warning per planted file, not one each).
  std::shared_ptr<const MessageLogProbe> message_logs_;
  std::unique_ptr<grpc::Service> peer_service_;
  std::unique_ptr<grpc::Server> peer_server_;
  // The Unix socket's streams: outlives the server, whose shutdown ends them.
  std::unique_ptr<StreamHost> streams_;
  std::vector<std::unique_ptr<grpc::Service>> services_;
  std::unique_ptr<UnixSocketServer> server_;
  // Prometheus /metrics (--metrics-port): its RPC timings, its page, its server.
  std::unique_ptr<RpcLatencies> rpc_latencies_;
  std::unique_ptr<DaemonMetrics> metrics_;
  std::unique_ptr<MetricsHttpServer> metrics_server_;
  bool stopped_ = false;
};

}  // namespace nk
