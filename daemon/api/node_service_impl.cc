#include "node_service_impl.h"

#include <chrono>

#include "api/refused_stream.h"
#include "api/telemetry_stream.h"
#include "node/node_controller.h"
#include "peer_identity.h"
#include "status_mapping.h"

namespace nk {

namespace v1 = nodekeeper::v1;

namespace {

constexpr std::chrono::milliseconds kFreshSampleShared{10};

void toProto(const TelemetrySample& sample, v1::TelemetrySnapshot* out) {
  out->set_timestamp_ns(sample.realtime_ns);
  out->set_monotonic_ns(sample.monotonic_ns);
  for (const auto& core : sample.cores) {
    auto* c = out->add_cores();
    c->set_id(core.id);
    c->set_package(core.package);
    c->set_cur_khz(core.cur_khz);
    c->set_min_khz(core.min_khz);
    c->set_max_khz(core.max_khz);
    c->set_governor(core.governor);
    c->set_temperature_c(core.temperature_c);
    c->set_utilisation(core.utilisation);
  }
  for (const auto& package : sample.packages) {
    auto* p = out->add_packages();
    p->set_id(package.id);
    p->set_power_w(package.power_w);
    p->set_energy_j(package.energy_j);
    p->set_raw_energy_uj(package.raw_energy_uj);
    p->set_max_energy_range_uj(package.max_energy_range_uj);
    p->set_power_limit_w(package.power_limit_w);
    p->set_power_limit_enabled(package.power_limit_enabled);
    p->set_temperature_c(package.temperature_c);
  }
  out->set_node_power_w(sample.node_power_w);
  out->set_node_energy_j(sample.node_energy_j);
  for (const auto& warning : sample.warnings) out->add_warnings(warning);
}

std::vector<uint32_t> cpusOf(const v1::CpuSet& set) { return {set.cpus().begin(), set.cpus().end()}; }

}  // namespace

NodeServiceImpl::NodeServiceImpl(NodeController& node, const AccessPolicy& access, StreamHost& streams, Info info)
    : node_(node), access_(access), streams_(streams), info_(std::move(info)) {}

grpc::Status NodeServiceImpl::requireAdmin(grpc::ServerContext* context, const char* action) const {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  if (access_.isAdmin(*peer)) return grpc::Status::OK;
  return toGrpcStatus(permissionDenied(std::string("permission denied: ") + action +
                                      " needs the admin role (root or group nodekeeper); you are uid " +
                                      std::to_string(peer->uid)));
}

grpc::Status NodeServiceImpl::GetTopology(grpc::ServerContext*, const v1::GetTopologyRequest*, v1::Topology* out) {
  const NodeTopology& topology = node_.topology();
  out->set_hostname(info_.hostname);
  out->set_cpu_model(topology.cpu_model);
  out->set_emulated(info_.emulated);
  out->set_profile(info_.profile);
  out->set_packages(topology.packages);
  out->set_numa_nodes(topology.numa_nodes);
  out->set_pus(topology.pus);
  for (const auto& core : topology.cores) {
    auto* c = out->add_cores();
    c->set_id(core.id);
    c->set_package(core.package);
    c->set_core_id(core.core_id);
    c->set_numa_node(core.numa_node);
    for (uint32_t cpu : core.cpus) c->add_cpus(cpu);
    for (uint32_t cpu : core.host_cpus) c->add_host_cpus(cpu);
  }
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::GetTelemetry(grpc::ServerContext*, const v1::GetTelemetryRequest* request,
                                           v1::TelemetrySnapshot* out) {
  // A fresh sample is shared for a few milliseconds: a caller asking in a
  // loop costs the hardware no more reads than the sampler itself at 100 Hz.
  auto sample = request->fresh() ? node_.telemetry().sampleNoOlderThan(kFreshSampleShared) : node_.telemetry().latest();
  toProto(*sample, out);
  return grpc::Status::OK;
}

grpc::ServerWriteReactor<v1::TelemetrySnapshot>* NodeServiceImpl::StreamTelemetry(
    grpc::CallbackServerContext* context, const v1::StreamTelemetryRequest* request) {
  using Refused = RefusedStream<grpc::ServerWriteReactor<v1::TelemetrySnapshot>>;
  uint32_t interval_ms = request->interval_ms() == 0 ? 1000 : request->interval_ms();
  if (interval_ms < 10) return Refused::make(streams_, toGrpcStatus(invalidArgument("interval_ms must be at least 10")));
  auto peer = PeerIdentity::withoutGroups(*context);
  if (!peer) return Refused::make(streams_, toGrpcStatus(peer.error()));
  auto slot = streams_.admit(*peer, "Node.StreamTelemetry");
  if (!slot) return Refused::make(streams_, toGrpcStatus(slot.error()));
  auto* stream = streams_.adopt(std::make_unique<TelemetryStream>(
      streams_, std::move(*slot), node_.telemetry(), std::chrono::milliseconds(interval_ms), &toProto));
  stream->begin();
  return stream;
}

grpc::Status NodeServiceImpl::fillPolicies(v1::FrequencyPolicies* out, const std::string& message) {
  auto policies = node_.frequencyPolicies();
  if (!policies) return toGrpcStatus(policies.error());
  for (const auto& policy : *policies) {
    auto* p = out->add_policies();
    p->set_id(policy.id);
    for (uint32_t cpu : policy.affected_cpus) p->add_cpus(cpu);
    p->set_driver(policy.driver);
    p->set_governor(policy.governor);
    for (const auto& g : policy.available_governors) p->add_available_governors(g);
    p->set_cur_khz(policy.cur_khz);
    p->set_min_khz(policy.min_khz);
    p->set_max_khz(policy.max_khz);
    p->set_cpuinfo_min_khz(policy.cpuinfo_min_khz);
    p->set_cpuinfo_max_khz(policy.cpuinfo_max_khz);
    p->set_setspeed_khz(policy.setspeed_khz.value_or(0));
    for (uint64_t khz : policy.available_khz) p->add_available_khz(khz);
    p->set_intel_pstate_active(policy.intel_pstate_active);
  }
  out->set_message(message);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::GetFrequencyPolicies(grpc::ServerContext*, const v1::GetFrequencyPoliciesRequest*,
                                                   v1::FrequencyPolicies* out) {
  return fillPolicies(out, "");
}

grpc::Status NodeServiceImpl::SetFrequencyLimits(grpc::ServerContext* context,
                                                 const v1::SetFrequencyLimitsRequest* request,
                                                 v1::FrequencyPolicies* out) {
  if (auto denied = requireAdmin(context, "setting frequency limits"); !denied.ok()) return denied;
  FrequencyRequest domain;
  domain.cpus = cpusOf(request->cpus());
  if (request->min_khz() > 0) domain.min_khz = request->min_khz();
  if (request->max_khz() > 0) domain.max_khz = request->max_khz();
  if (request->speed_khz() > 0) domain.speed_khz = request->speed_khz();
  auto result = node_.setFrequencyLimits(domain);
  if (!result) return toGrpcStatus(result.error());
  return fillPolicies(out, *result);
}

grpc::Status NodeServiceImpl::SetGovernor(grpc::ServerContext* context, const v1::SetGovernorRequest* request,
                                          v1::FrequencyPolicies* out) {
  if (auto denied = requireAdmin(context, "setting the governor"); !denied.ok()) return denied;
  auto result = node_.setGovernor(cpusOf(request->cpus()), request->governor());
  if (!result) return toGrpcStatus(result.error());
  return fillPolicies(out, *result);
}

grpc::Status NodeServiceImpl::fillPowerCaps(v1::PowerCaps* out, const std::string& message) {
  auto zones = node_.powerCaps();
  if (!zones) return toGrpcStatus(zones.error());
  for (const auto& zone : *zones) {
    auto* cap = out->add_caps();
    cap->set_package(zone.index);
    cap->set_zone("intel-rapl:" + std::to_string(zone.index));
    cap->set_limit_w(zone.power_limit_uw ? static_cast<double>(*zone.power_limit_uw) / 1e6 : 0);
    cap->set_enabled(zone.enabled);
  }
  out->set_message(message);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::GetPowerCaps(grpc::ServerContext*, const v1::GetPowerCapsRequest*, v1::PowerCaps* out) {
  return fillPowerCaps(out, "");
}

grpc::Status NodeServiceImpl::SetPowerCap(grpc::ServerContext* context, const v1::SetPowerCapRequest* request,
                                          v1::PowerCaps* out) {
  if (auto denied = requireAdmin(context, "setting the power cap"); !denied.ok()) return denied;
  std::vector<uint32_t> packages(request->packages().begin(), request->packages().end());
  auto result = request->disable() ? node_.disablePowerCap(packages) : node_.setPowerCap(packages, request->limit_w());
  if (!result) return toGrpcStatus(result.error());
  return fillPowerCaps(out, *result);
}

grpc::Status NodeServiceImpl::GetPolicy(grpc::ServerContext*, const v1::GetPolicyRequest*, v1::NodePolicy* out) {
  out->set_policy(node_.policy());
  for (const auto& name : node_.availablePolicies()) out->add_available(name);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::SetPolicy(grpc::ServerContext* context, const v1::SetPolicyRequest* request,
                                        v1::NodePolicy* out) {
  if (auto denied = requireAdmin(context, "setting the node policy"); !denied.ok()) return denied;
  auto result = node_.setPolicy(request->policy());
  if (!result) return toGrpcStatus(result.error());
  out->set_policy(node_.policy());
  for (const auto& name : node_.availablePolicies()) out->add_available(name);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::WhoAmI(grpc::ServerContext* context, const v1::WhoAmIRequest*, v1::Identity* out) {
  auto peer = PeerIdentity::fromContext(*context);
  if (!peer) return toGrpcStatus(peer.error());
  out->set_pid(peer->pid);
  out->set_uid(peer->uid);
  out->set_gid(peer->gid);
  out->set_role(static_cast<v1::Role>(access_.roleOf(*peer)));
  return grpc::Status::OK;
}

}  // namespace nk
