#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "api/stream_host.h"
#include "faults/symptom_intake.h"
#include "nodekeeper/v1/faults.grpc.pb.h"

namespace nk {

class AccessPolicy;
class FaultReportLog;
class FaultTreeCoordinator;
class GrpcPeerNetwork;
class JobRegistry;
class SymptomStore;

// FaultsService, the daemon's side of the PMPI agent: ranks register
// (checked against SO_PEERCRED), give their job's nodes, report progress
// and symptoms (checked and filled in by SymptomIntake, which turns a
// collective's timeout into the members that have not arrived). Node lists
// build the jobs' fault trees and symptoms enter them (the
// FaultTreeCoordinator); WatchFaults shows what this daemon published as a
// tree's root. Admins may act for any rank; ListJobs, WatchSymptoms and
// WatchFaults show a user only their own jobs.
// The two watches are callback-API streams held by the StreamHost.
class FaultsServiceImpl final
    : public nodekeeper::v1::FaultsService::WithCallbackMethod_WatchSymptoms<
          nodekeeper::v1::FaultsService::WithCallbackMethod_WatchFaults<nodekeeper::v1::FaultsService::Service>> {
 public:
  struct Options {
    // The RankProgress calls to other daemons (SymptomIntake::Options).
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
                    StreamHost& streams, Options options);

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
  grpc::ServerWriteReactor<nodekeeper::v1::Symptom>* WatchSymptoms(grpc::CallbackServerContext*,
                                                                    const nodekeeper::v1::WatchSymptomsRequest*) override;
  grpc::ServerWriteReactor<nodekeeper::v1::FaultReport>* WatchFaults(grpc::CallbackServerContext*,
                                                                     const nodekeeper::v1::WatchFaultsRequest*) override;
  grpc::Status PeerInfo(grpc::ServerContext*, const nodekeeper::v1::PeerInfoRequest*,
                        nodekeeper::v1::PeerInfoResponse*) override;

 private:
  JobRegistry& jobs_;
  SymptomStore& symptoms_;
  const AccessPolicy& access_;
  GrpcPeerNetwork& network_;
  FaultTreeCoordinator& coordinator_;
  FaultReportLog& reports_;
  StreamHost& streams_;
  Options options_;
  SymptomIntake intake_;
};

}  // namespace nk
