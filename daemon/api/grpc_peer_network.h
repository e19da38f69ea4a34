#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/peer_token.h"
#include "api/peer_transport.h"
#include "faults/peer_network.h"
#include "faults/prober.h"

namespace grpc {
class Channel;
}

namespace nk {

// The fault tree's messages and probes, and the progress of a job's ranks,
// as FaultTreeService calls to other daemons, over TCP ("host:port", in
// mutual TLS when the transport says so) or a Unix socket ("unix:PATH"),
// each with the peer token (if any) and its own deadline.
// Nodes are found by name in the endpoints the jobs' node lists gave (the
// latest wins).
class GrpcPeerNetwork final : public PeerNetwork, public Prober {
 public:
  struct Options {
    std::chrono::milliseconds heartbeat_deadline{100};
    std::chrono::milliseconds message_deadline{500};  // symptoms and faults
    std::chrono::milliseconds probe_deadline{250};    // each probe attempt
    // Every deadline above grows by this factor on a busy host
    // (SchedulingDelay): a late answer is not a lost one. Null: 1.
    std::function<double()> delay_factor;
    // What a heartbeat tells its receiver of this host's delay: the lateness
    // of the thread that sends it (SchedulingDelay's threadFactor), since
    // the receiver's timeout is about that thread. Null: delay_factor.
    std::function<double()> sender_delay_factor;
    // TLS or clear for TCP channels; null: in clear.
    std::shared_ptr<const PeerTransport> transport;
  };

  GrpcPeerNetwork(PeerToken token, Options options) : token_(std::move(token)), options_(std::move(options)) {}

  void setEndpoint(const std::string& node, const std::string& endpoint);
  std::string endpointOf(std::string_view node) const;
  // Kept per endpoint; reconnects quickly after a peer restarts.
  std::shared_ptr<grpc::Channel> channelTo(const std::string& endpoint);
  const PeerToken& token() const { return token_; }

  Delivery forwardSymptom(std::string_view node, const SymptomRecord& symptom) override;
  Delivery publishFault(std::string_view node, const FaultRecord& fault) override;
  Delivery heartbeat(std::string_view node, std::string_view job_id, std::string_view from, bool leaving) override;
  std::vector<Result<PeerProgress>> rankProgress(std::string_view job_id, std::span<const JobNodeRecord> nodes,
                                                 std::chrono::milliseconds deadline) override;

  ResponseFindings responseProbe(std::string_view node, size_t attempts) override;
  StatusFindings statusProbe(std::string_view job_id, std::string_view node) override;
  LogFindings logProbe(std::string_view job_id, std::string_view node, int64_t from_ns, int64_t to_ns) override;

 private:
  // A deadline of Options, grown by the delay factor.
  std::chrono::milliseconds scaled(std::chrono::milliseconds deadline) const;

  PeerToken token_;
  Options options_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string, std::less<>> endpoints_;
  std::map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

}  // namespace nk
