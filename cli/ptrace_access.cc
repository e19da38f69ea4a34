#include "cli/ptrace_access.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <map>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/units.h"

namespace nk {
namespace {

constexpr int kCapSysPtrace = 19;  // include/uapi/linux/capability.h

// The "Key:\tvalue" lines of /proc/PID/status that the checks read.
using StatusFields = std::map<std::string, std::string, std::less<>>;

std::optional<StatusFields> readStatus(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  StatusFields fields;
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    fields.emplace(line.substr(0, colon), std::string(trim(std::string_view(line).substr(colon + 1))));
  }
  return fields;
}

template <typename T>
std::optional<T> parseNumber(std::string_view word, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, base);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

// "Uid:" and "Gid:" hold real, effective, saved and filesystem ids.
std::optional<std::vector<uint32_t>> parseIds(const StatusFields& fields, std::string_view key) {
  auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  std::vector<uint32_t> ids;
  for (auto word : splitWhitespace(it->second)) {
    auto id = parseNumber<uint32_t>(word);
    if (!id) return std::nullopt;
    ids.push_back(*id);
  }
  if (ids.size() < 3) return std::nullopt;
  return ids;
}

std::optional<int64_t> parseField(const StatusFields& fields, std::string_view key) {
  auto it = fields.find(key);
  if (it == fields.end()) return std::nullopt;
  return parseNumber<int64_t>(it->second);
}

std::string describeIds(const std::vector<uint32_t>& ids) {
  if (ids[0] == ids[1] && ids[1] == ids[2]) return std::to_string(ids[0]);
  return "real " + std::to_string(ids[0]) + ", effective " + std::to_string(ids[1]) + ", saved " +
         std::to_string(ids[2]);
}

std::string commOf(const std::filesystem::path& proc_root, int64_t pid) {
  std::ifstream in(proc_root / std::to_string(pid) / "comm");
  std::string comm;
  if (in) std::getline(in, comm);
  return comm;
}

PtraceDecision refuse(std::optional<int> scope, std::string why) {
  return {PtraceVerdict::kRefused, scope, std::move(why)};
}

}  // namespace

Status PtraceDecision::toStatus() const {
  switch (verdict) {
    case PtraceVerdict::kAllowed:
    case PtraceVerdict::kAllowedIfTargetNamesTracer:
      return {};
    case PtraceVerdict::kTargetGone:
      return notFound(explanation);
    case PtraceVerdict::kRefused:
      break;
  }
  return permissionDenied(explanation);
}

PtraceAccess::PtraceAccess(std::filesystem::path proc_root) : proc_root_(std::move(proc_root)) {}

Result<std::optional<int>> PtraceAccess::yamaScope() const {
  auto file = proc_root_ / "sys/kernel/yama/ptrace_scope";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::optional<int>();
  std::ifstream in(file);
  std::string text;
  if (!in || !std::getline(in, text)) return internalError("cannot read " + file.string());
  auto scope = parseNumber<int>(trim(text));
  if (!scope) return internalError(file.string() + " holds \"" + text + "\", not a number");
  return std::optional<int>(*scope);
}

Result<PtraceTracer> PtraceAccess::currentProcess() const {
  auto file = proc_root_ / "self/status";
  auto fields = readStatus(file);
  if (!fields) return internalError("cannot read " + file.string());
  auto it = fields->find("CapEff");
  if (it == fields->end()) return internalError(file.string() + " has no CapEff line");
  auto caps = parseNumber<uint64_t>(it->second, 16);
  if (!caps) return internalError(file.string() + ": CapEff \"" + it->second + "\" is not hexadecimal");
  PtraceTracer tracer;
  tracer.uid = getuid();
  tracer.gid = getgid();
  tracer.cap_sys_ptrace = (*caps >> kCapSysPtrace) & 1;
  tracer.pid = getpid();
  return tracer;
}

// Yama scope 1 lets a tracer attach to its descendants; walking PPid up from
// the target finds out. Bounded, because a fake or racing tree may loop.
bool PtraceAccess::isDescendant(pid_t target, pid_t ancestor) const {
  int64_t pid = target;
  for (int depth = 0; depth < 4096 && pid > 1; ++depth) {
    auto fields = readStatus(proc_root_ / std::to_string(pid) / "status");
    if (!fields) return false;
    auto parent = parseField(*fields, "PPid");
    if (!parent) return false;
    if (*parent == ancestor) return true;
    pid = *parent;
  }
  return false;
}

PtraceDecision PtraceAccess::check(const PtraceTracer& tracer, pid_t target, bool target_can_name_tracer) const {
  auto scope_or = yamaScope();
  std::optional<int> scope = scope_or.ok() ? *scope_or : std::nullopt;
  std::string process = "process " + std::to_string(target);

  if (target <= 0) return {PtraceVerdict::kTargetGone, scope, std::to_string(target) + " is not a process id"};
  auto fields = readStatus(proc_root_ / std::to_string(target) / "status");
  if (!fields) return {PtraceVerdict::kTargetGone, scope, process + " does not exist (it has exited)"};
  if (auto state = fields->find("State"); state != fields->end() && !state->second.empty() &&
                                          (state->second[0] == 'Z' || state->second[0] == 'X')) {
    return {PtraceVerdict::kTargetGone, scope, process + " has exited (a zombie waiting for its parent)"};
  }
  // A scope we cannot read is not one we can reason about; gdb would only
  // find out with a bare EPERM, so say why now.
  if (!scope_or.ok()) return refuse(std::nullopt, "cannot tell whether ptrace is allowed: " + scope_or.error().message);

  // Scope 3 refuses even root, so nothing below could help.
  if (scope && *scope >= 3) {
    return refuse(scope, "kernel.yama.ptrace_scope is " + std::to_string(*scope) +
                             ": no process may attach until reboot (the setting cannot be lowered while the "
                             "system runs)");
  }

  if (auto tracer_pid = parseField(*fields, "TracerPid"); tracer_pid && *tracer_pid != 0) {
    auto comm = commOf(proc_root_, *tracer_pid);
    return refuse(scope, process + " is already traced by process " + std::to_string(*tracer_pid) +
                             (comm.empty() ? "" : " (" + comm + ")") +
                             ": a process has one tracer at a time; detach that debugger first");
  }

  // Classic rules (commoncap): the target's real, effective and saved ids
  // must all be the tracer's, or the tracer needs CAP_SYS_PTRACE.
  if (!tracer.cap_sys_ptrace) {
    auto uids = parseIds(*fields, "Uid");
    if (!uids) return refuse(scope, "cannot read the owner of " + process);
    if ((*uids)[0] != tracer.uid || (*uids)[1] != tracer.uid || (*uids)[2] != tracer.uid) {
      return refuse(scope, process + " runs as uid " + describeIds(*uids) + " and the debugger as uid " +
                               std::to_string(tracer.uid) +
                               ": a process may only be traced by its own user, or by one with "
                               "CAP_SYS_PTRACE: debug it as its owner or as root");
    }
    if (tracer.gid) {
      auto gids = parseIds(*fields, "Gid");
      if (!gids) return refuse(scope, "cannot read the group of " + process);
      if ((*gids)[0] != *tracer.gid || (*gids)[1] != *tracer.gid || (*gids)[2] != *tracer.gid) {
        return refuse(scope, process + " runs with gid " + describeIds(*gids) + " and the debugger with gid " +
                                 std::to_string(*tracer.gid) +
                                 ": the kernel wants the same user and group (it changed its ids, e.g. "
                                 "setgid or newgrp): debug it as root");
      }
    }
  }

  if (!scope || *scope == 0 || tracer.cap_sys_ptrace) return {PtraceVerdict::kAllowed, scope, ""};

  if (*scope == 2) {
    return refuse(scope, "kernel.yama.ptrace_scope is 2: only processes with CAP_SYS_PTRACE (root) may attach: "
                         "run as root or `sysctl kernel.yama.ptrace_scope=1`");
  }
  if (*scope == 1) {
    if (tracer.pid && isDescendant(target, *tracer.pid)) return {PtraceVerdict::kAllowed, scope, ""};
    if (target_can_name_tracer) {
      return {PtraceVerdict::kAllowedIfTargetNamesTracer, scope,
              "kernel.yama.ptrace_scope is 1: " + process +
                  " is not the debugger's descendant, so it must name the debugger with "
                  "prctl(PR_SET_PTRACER) before the debugger attaches"};
    }
    return refuse(scope, "kernel.yama.ptrace_scope is 1: a process may only be traced by its ancestors, by a "
                         "debugger it names with prctl(PR_SET_PTRACER), or by root; " +
                             process +
                             " is none of these (start it with libnodekeeper.so so that nodekeeper can ask it), "
                             "or run as root, or `sysctl kernel.yama.ptrace_scope=0`");
  }
  return refuse(scope, "kernel.yama.ptrace_scope is " + std::to_string(*scope) + ", a value this check does not know");
}

}  // namespace nk
