#include "cli/job_commands.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <ostream>

#include "base/units.h"
#include "cli/command_line.h"
#include "cli/command_table.h"
#include "cli/jobs_client.h"

namespace nk::cli {

namespace pb = nodekeeper::v1;

namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxNodes = 65536;

Result<std::string> required(const Invocation& invocation, const std::string& name, const std::string& command) {
  auto value = invocation.options.value(name);
  if (!value || value->empty()) return invalidArgument(command + ": --" + name + " is required");
  return *value;
}

template <typename Number>
Result<Number> number(const std::string& text, const std::string& what, Number low, Number high) {
  Number value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high)
    return invalidArgument(what + " '" + text + "' is not a number from " + std::to_string(low) + " to " +
                           std::to_string(high));
  return value;
}

std::string endName(pb::JobEnd end) {
  switch (end) {
    case pb::JOB_END_RUNNING: return "running";
    case pb::JOB_END_COMPLETED: return "completed";
    case pb::JOB_END_FAILED: return "failed";
    case pb::JOB_END_CANCELLED: return "cancelled";
    case pb::JOB_END_ABORTED: return "aborted";
    case pb::JOB_END_UNKNOWN: return "unknown";
    default: return "unknown";
  }
}

}  // namespace

Result<pb::BeginJobRequest> JobCommands::beginRequest(const Invocation& invocation) {
  pb::BeginJobRequest request;
  auto job = required(invocation, "job", "job begin");
  if (!job) return job.error();
  request.set_job_id(*job);
  auto uid_text = required(invocation, "uid", "job begin");
  if (!uid_text) return uid_text.error();
  auto uid = number<uint32_t>(*uid_text, "job begin: --uid", 0, 0xfffffffeu);
  if (!uid) return uid.error();
  request.set_uid(*uid);
  if (auto nodes = invocation.options.value("nodes"); nodes && !nodes->empty()) {
    size_t start = 0;
    while (start <= nodes->size()) {
      size_t comma = nodes->find(',', start);
      if (comma == std::string::npos) comma = nodes->size();
      std::string name = nodes->substr(start, comma - start);
      if (name.empty()) return invalidArgument("job begin: --nodes '" + *nodes + "' has an empty name");
      if (static_cast<size_t>(request.nodes_size()) >= kMaxNodes)
        return invalidArgument("job begin: --nodes lists more than " + std::to_string(kMaxNodes) + " nodes");
      request.add_nodes(std::move(name));
      start = comma + 1;
    }
  }
  if (auto port = invocation.options.value("peer-port")) {
    auto value = number<uint32_t>(*port, "job begin: --peer-port", 1, 65535);
    if (!value) return value.error();
    request.set_peer_port(*value);
  }
  if (auto budget = invocation.options.value("budget")) {
    auto watts = parsePowerWatts(*budget);
    if (!watts) return invalidArgument("job begin: --budget: " + watts.error().message);
    const double milliwatts = std::round(*watts * 1000.0);
    if (!(milliwatts >= 1) || milliwatts > 1e9)
      return invalidArgument("job begin: --budget '" + *budget + "' is out of range (1 mW to 1000000 W)");
    request.mutable_settings()->set_power_budget_mw(static_cast<uint64_t>(milliwatts));
  }
  if (auto policy = invocation.options.value("policy")) request.mutable_settings()->set_policy(*policy);
  if (auto tasks = invocation.options.value("tasks")) {
    if (*tasks != "lossless" && *tasks != "lossy")
      return invalidArgument("job begin: --tasks '" + *tasks + "' is neither lossless nor lossy");
    request.mutable_settings()->set_tasks(*tasks);
  }
  request.mutable_settings()->set_debug(invocation.options.has("debug"));
  if (auto program = invocation.options.value("program")) request.set_program(*program);
  if (auto step_pid = invocation.options.value("step-pid")) {
    auto pid = number<int32_t>(*step_pid, "job begin: --step-pid", 2, 0x3fffffff);
    if (!pid) return pid.error();
    request.set_step_pid(*pid);
  }
  return request;
}

Result<pb::AttachProcessRequest> JobCommands::attachRequest(const Invocation& invocation) {
  pb::AttachProcessRequest request;
  auto job = required(invocation, "job", "job attach");
  if (!job) return job.error();
  request.set_job_id(*job);
  auto pid_text = required(invocation, "pid", "job attach");
  if (!pid_text) return pid_text.error();
  auto pid = number<int32_t>(*pid_text, "job attach: --pid", 2, 0x3fffffff);
  if (!pid) return pid.error();
  request.set_pid(*pid);
  return request;
}

Result<pb::EndJobRequest> JobCommands::endRequest(const Invocation& invocation) {
  pb::EndJobRequest request;
  auto job = required(invocation, "job", "job end");
  if (!job) return job.error();
  request.set_job_id(*job);
  auto end = required(invocation, "end", "job end");
  if (!end) return end.error();
  static const std::pair<const char*, pb::JobEnd> kEnds[] = {{"completed", pb::JOB_END_COMPLETED},
                                                             {"failed", pb::JOB_END_FAILED},
                                                             {"cancelled", pb::JOB_END_CANCELLED},
                                                             {"aborted", pb::JOB_END_ABORTED},
                                                             {"unknown", pb::JOB_END_UNKNOWN}};
  bool known = false;
  for (const auto& [name, value] : kEnds)
    if (*end == name) request.set_end(value), known = true;
  if (!known)
    return invalidArgument("job end: --end '" + *end + "' is not one of completed, failed, cancelled, aborted, unknown");
  if (auto detail = invocation.options.value("detail")) request.set_detail(*detail);
  return request;
}

std::string JobCommands::jobText(const pb::Job& job) {
  std::string text = "job " + job.job_id() + " (" + job.source() + ", uid " + std::to_string(job.uid()) + "): ";
  text += endName(job.end());
  if (!job.end_detail().empty()) text += " (" + job.end_detail() + ")";
  char energy[64];
  snprintf(energy, sizeof energy, ", %.1f J", job.energy_j());
  return text + energy + "\n";
}

std::string JobCommands::jobJson(const pb::Job& job) {
  Json nodes = Json::array();
  for (const auto& n : job.nodes()) nodes.push_back({{"node", n.node()}, {"endpoint", n.endpoint()}});
  Json out = {{"job_id", job.job_id()},
              {"uid", job.uid()},
              {"source", job.source()},
              {"program", job.program()},
              {"end", endName(job.end())},
              {"end_detail", job.end_detail()},
              {"energy_j", job.energy_j()},
              {"settings",
               {{"power_budget_mw", job.settings().power_budget_mw()},
                {"policy", job.settings().policy()},
                {"tasks", job.settings().tasks()},
                {"debug", job.settings().debug()}}},
              {"nodes_from", job.nodes_from()},
              {"nodes", nodes}};
  return out.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

int JobCommands::run(const Invocation& invocation, JobsClient& client, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& message) {
    err << "nodekeeper: " << message << "\n";
    err.flush();
    return 1;
  };
  const bool json = invocation.global.json;
  switch (invocation.command->id) {
    case CommandId::kJobBegin: {
      auto request = beginRequest(invocation);
      if (!request) return fail(request.error().message);
      auto job = client.beginJob(*request);
      if (!job) return fail(job.error().message);
      out << (json ? jobJson(*job) : jobText(*job));
      return 0;
    }
    case CommandId::kJobAttach: {
      auto request = attachRequest(invocation);
      if (!request) return fail(request.error().message);
      if (Status s = client.attachProcess(*request); !s) return fail(s.error().message);
      if (json) out << "{}\n";
      return 0;
    }
    case CommandId::kJobEnd: {
      auto request = endRequest(invocation);
      if (!request) return fail(request.error().message);
      auto job = client.endJob(*request);
      if (!job) return fail(job.error().message);
      out << (json ? jobJson(*job) : jobText(*job));
      return 0;
    }
    default: return fail("not a job command");
  }
}

}  // namespace nk::cli
