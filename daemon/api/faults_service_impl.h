#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "nodekeeper/v1/faults.grpc.pb.h"

namespace nk {

class AccessPolicy;
class FaultReportLog;
class FaultTreeCoordinator;
class GrpcPeerNetwork;
class JobRegistry;
class SymptomStore;
struct JobRecord;
struct MemberState;
struct SymptomRecord;

// FaultsService, the daemon's side of the PMPI agent: ranks register
// (checked against SO_PEERCRED), give their job's nodes, report progress
// and symptoms; a collective's timeout is turned into the members that have
// not arrived by asking the other nodes' daemons (FaultTreeService's
// RankProgress) how far their ranks got. Node lists build the jobs' fault
// trees and symptoms enter them (the FaultTreeCoordinator); WatchFaults
// shows what this daemon published as a tree's root. Admins may act for
// any rank; ListJobs, WatchSymptoms and WatchFaults show a user only their
// own jobs.
class FaultsServiceImpl final : public nodekeeper::v1::FaultsService::Service {
 public:
  struct Options {
    // Each RankProgress call to another daemon; a node that does not
    // answer in time counts as unreachable.
    std::chrono::milliseconds peer_timeout{500};
    // The agents' progress period, and how many of them may pass without a
    // report before a rank counts as not arriving.
    std::chrono::milliseconds heartbeat_period{200};
    unsigned stale_periods = 3;
    // Each stored symptom, once (the daemon logs it).
    std::function<void(const SymptomRecord&)> on_symptom;
    std::function<void(const std::string&)> log_warning;
    // What PeerInfo tells the agents: --node-name and --listen ("" unset).
    std::string node_name;
    std::string peer_endpoint;
  };

  // `own_endpoint`: how other daemons reach this one ("unix:" + its socket),
  // so that it does not ask itself.
  FaultsServiceImpl(JobRegistry& jobs, SymptomStore& symptoms, const AccessPolicy& access, std::string own_endpoint,
                    GrpcPeerNetwork& network, FaultTreeCoordinator& coordinator, FaultReportLog& reports,
                    Options options);

  grpc::Status RegisterRank(grpc::ServerContext*, const nodekeeper::v1::RegisterRankRequest*,
                            nodekeeper::v1::RegisterRankResponse*) override;
  grpc::Status SetJobNodes(grpc::ServerContext*, const nodekeeper::v1::SetJobNodesRequest*,
                           nodekeeper::v1::SetJobNodesResponse*) override;
  grpc::Status ReportProgress(grpc::ServerContext*, const nodekeeper::v1::ProgressReport*,
                              nodekeeper::v1::ReportProgressResponse*) override;
  grpc::Status ReportSymptom(grpc::ServerContext*, const nodekeeper::v1::Symptom*,
                             nodekeeper::v1::ReportSymptomResponse*) override;
  grpc::Status ListJobs(grpc::ServerContext*, const nodekeeper::v1::ListJobsRequest*,
                        nodekeeper::v1::JobList*) override;
  grpc::Status WatchSymptoms(grpc::ServerContext*, const nodekeeper::v1::WatchSymptomsRequest*,
                             grpc::ServerWriter<nodekeeper::v1::Symptom>*) override;
  grpc::Status WatchFaults(grpc::ServerContext*, const nodekeeper::v1::WatchFaultsRequest*,
                           grpc::ServerWriter<nodekeeper::v1::FaultReport>*) override;
  grpc::Status PeerInfo(grpc::ServerContext*, const nodekeeper::v1::PeerInfoRequest*,
                        nodekeeper::v1::PeerInfoResponse*) override;

 private:
  // The members' states: this daemon's ranks, and those the other nodes'
  // daemons give (all asked at once, each with peer_timeout).
  std::vector<MemberState> gatherStates(const JobRecord& job, const std::set<uint32_t>& members);
  void findLaggards(const JobRecord& job, SymptomRecord& symptom);
  void warn(const std::string& message) const;

  JobRegistry& jobs_;
  SymptomStore& symptoms_;
  const AccessPolicy& access_;
  std::string own_endpoint_;
  GrpcPeerNetwork& network_;
  FaultTreeCoordinator& coordinator_;
  FaultReportLog& reports_;
  Options options_;
};

}  // namespace nk
