#include "agent_options.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace nk::pmpi {

namespace {

// A count of milliseconds in [low, high], or a warning and the default.
void milliseconds(const char* (*getenv)(const char*), const char* name, long low, long high,
                  std::chrono::milliseconds* out, std::vector<std::string>* warnings) {
  const char* text = getenv(name);
  if (!text || !*text) return;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < low || value > high) {
    warnings->push_back("nodekeeper-pmpi: ignoring " + std::string(name) + "=\"" + text + "\": expected " +
                        std::to_string(low) + " to " + std::to_string(high) + " milliseconds");
    return;
  }
  *out = std::chrono::milliseconds(value);
}

}  // namespace

AgentOptions AgentOptions::fromEnvironment(const char* (*getenv)(const char*)) {
  AgentOptions o;
  if (const char* v = getenv("NODEKEEPER_PMPI"); v && std::string(v) == "off") o.enabled = false;
  if (const char* v = getenv("NODEKEEPER_PMPI_PMIX"); v && std::string(v) == "off") o.use_pmix = false;
  if (const char* v = getenv("NODEKEEPER_PMPI_VERBOSE"); v && *v && std::string(v) != "0") o.verbose = true;
  if (const char* v = getenv("NODEKEEPER_SOCKET"); v && *v) o.socket_path = v;
  if (const char* v = getenv("NODEKEEPER_NODE"); v && *v) {
    o.node = v;
  } else {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) o.node = host;
  }
  milliseconds(getenv, "NODEKEEPER_PMPI_DEADLINE_MS", 1, 86400000, &o.fixed_deadline, &o.warnings);
  milliseconds(getenv, "NODEKEEPER_PMPI_DEADLINE_FLOOR_MS", 1, 86400000, &o.deadline_floor, &o.warnings);
  milliseconds(getenv, "NODEKEEPER_PMPI_HEARTBEAT_MS", 10, 600000, &o.heartbeat, &o.warnings);
  if (const char* v = getenv("NODEKEEPER_JOB_ID"); v && *v) {
    o.job_id = v;
  } else if (const char* ns = getenv("PMIX_NAMESPACE"); ns && *ns) {
    o.job_id = ns;
  } else if (const char* slurm = getenv("SLURM_JOB_ID"); slurm && *slurm) {
    const char* step = getenv("SLURM_STEP_ID");
    o.job_id = std::string(slurm) + (step && *step ? std::string(".") + step : "");
  }
  return o;
}

}  // namespace nk::pmpi
