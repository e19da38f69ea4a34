#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "base/result.h"

namespace nk {

// Who will call ptrace(PTRACE_ATTACH). That is gdb, not the process that
// starts it: a root daemon that drops gdb to the app's uid must describe the
// dropped gdb (uid/gid of the app, no capability), or the answer is wrong.
struct PtraceTracer {
  uid_t uid = 0;
  // The kernel compares gids as well as uids; unset skips the gid check
  // (the caller does not know it, or knows it matches).
  std::optional<gid_t> gid;
  bool cap_sys_ptrace = false;
  // Under Yama scope 1 a tracer may always attach to its own descendants;
  // unset when the tracer does not exist yet (gdb before fork).
  std::optional<pid_t> pid;
};

enum class PtraceVerdict {
  kAllowed,
  // Yama scope 1 and the target is not the tracer's descendant: attach works
  // only once the target has called prctl(PR_SET_PTRACER, tracer_pid).
  // nodekeeper's library does that on request; the caller must arrange it
  // before gdb attaches (GdbProcess::start, then ask the app, then release).
  kAllowedIfTargetNamesTracer,
  kRefused,
  kTargetGone,
};

struct PtraceDecision {
  PtraceVerdict verdict = PtraceVerdict::kRefused;
  // Yama's kernel.yama.ptrace_scope, nothing when Yama is not in the kernel.
  std::optional<int> yama_scope;
  // Why, in words a user can act on; empty when plainly allowed.
  std::string explanation;

  bool mayAttach() const {
    return verdict == PtraceVerdict::kAllowed || verdict == PtraceVerdict::kAllowedIfTargetNamesTracer;
  }
  // Refusals as errors (kPermissionDenied, kNotFound for a gone target), so
  // RPC handlers can return them as they are.
  Status toStatus() const;
};

// Predicts whether ptrace attach will succeed, from procfs, so that a refusal
// is explained before gdb prints a bare "Operation not permitted". It follows
// the kernel's rules (classic same-credentials-or-CAP_SYS_PTRACE, then Yama)
// but cannot see everything (non-dumpable targets, user namespaces, LSMs
// other than Yama), so gdb may still refuse; it never allows what the kernel
// would refuse for the reasons it does check.
class PtraceAccess {
 public:
  // procfs mounted at `proc_root`: the Yama scope is
  // proc_root/sys/kernel/yama/ptrace_scope, the target's credentials
  // proc_root/PID/status. Tests point it at a fake tree.
  explicit PtraceAccess(std::filesystem::path proc_root = "/proc");

  // Yama's scope; nothing when the file is absent (no Yama: classic rules
  // only); an error when it exists but cannot be read or parsed.
  Result<std::optional<int>> yamaScope() const;

  // The calling process as a tracer: real uid and gid (ptrace attach checks
  // the real ids) and CAP_SYS_PTRACE from proc_root/self/status CapEff.
  Result<PtraceTracer> currentProcess() const;

  // `target_can_name_tracer`: whether the target can be asked to call
  // prctl(PR_SET_PTRACER) (an app registered with nodekeeper can). Without
  // it, Yama scope 1 refuses instead of answering kAllowedIfTargetNamesTracer.
  PtraceDecision check(const PtraceTracer& tracer, pid_t target, bool target_can_name_tracer = false) const;

 private:
  bool isDescendant(pid_t target, pid_t ancestor) const;

  std::filesystem::path proc_root_;
};

}  // namespace nk
