#pragma once

#include "nodekeeper/v1/jobs.grpc.pb.h"

namespace nk {

class AccessPolicy;
class JobRegistry;

// JobsService: a scheduler (the Slurm plugin, as root) tells the daemon of
// its jobs. Only the admin may: the job's uid, settings and processes are
// taken as given. Translates to JobRegistry calls.
class JobsServiceImpl final : public nodekeeper::v1::JobsService::Service {
 public:
  JobsServiceImpl(JobRegistry& jobs, const AccessPolicy& access);

  grpc::Status BeginJob(grpc::ServerContext*, const nodekeeper::v1::BeginJobRequest*, nodekeeper::v1::Job*) override;
  grpc::Status AttachProcess(grpc::ServerContext*, const nodekeeper::v1::AttachProcessRequest*,
                             nodekeeper::v1::AttachProcessResponse*) override;
  grpc::Status EndJob(grpc::ServerContext*, const nodekeeper::v1::EndJobRequest*, nodekeeper::v1::Job*) override;

 private:
  // The job as the reply carries it; NOT_FOUND when it is gone.
  grpc::Status reply(const std::string& job_id, nodekeeper::v1::Job* out) const;

  JobRegistry& jobs_;
  const AccessPolicy& access_;
};

}  // namespace nk
