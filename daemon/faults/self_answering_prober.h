#pragma once

#include <functional>
#include <string_view>

#include "faults/prober.h"

namespace nk {

// The probes TFA sends about this daemon's own node, answered here: the
// daemon is alive (it is this process), its status and message logs are
// read locally. A round trip to itself through the network (gRPC to its
// own listener) would only measure how busy the host is, and on a busy
// host a late answer made the daemon report its own node down. Probes
// about any other node go to `remote`.
class SelfAnsweringProber final : public Prober {
 public:
  struct Self {
    // True when `node` is this daemon's name in the job's tree; an empty
    // `job_id` (the response probe names no job) asks about any job.
    std::function<bool(std::string_view job_id, std::string_view node)> is_self;
    std::function<StatusFindings(std::string_view job_id)> status;
    // Null: the log probe about this node is unanswered, as when a peer
    // cannot read its logs.
    std::function<LogFindings(std::string_view job_id, int64_t from_ns, int64_t to_ns)> log;
  };

  SelfAnsweringProber(Prober& remote, Self self) : remote_(remote), self_(std::move(self)) {}

  ResponseFindings responseProbe(std::string_view node, size_t attempts) override;
  StatusFindings statusProbe(std::string_view job_id, std::string_view node) override;
  LogFindings logProbe(std::string_view job_id, std::string_view node, int64_t from_ns, int64_t to_ns) override;

 private:
  bool isSelf(std::string_view job_id, std::string_view node) const;

  Prober& remote_;
  Self self_;
};

}  // namespace nk
