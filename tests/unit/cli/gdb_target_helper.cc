// Debuggee for gdb_process_test: names its tracer when told (as
// libnodekeeper does under Yama scope 1), then calls a function gdb can break
// on, forever.
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

volatile unsigned long nk_ticks = 0;

extern "C" __attribute__((noinline)) void nk_debug_target_tick(unsigned long n) {
  nk_ticks = n;
  asm volatile("" ::: "memory");  // keeps the call from being folded away
}

int main() {
  // "ready": the test may look at this process now (its final uid).
  std::printf("ready\n");
  std::fflush(stdout);
  // One line on stdin: the tracer's pid, or 0 for none. Then "ok" on stdout.
  long tracer = 0;
  if (std::scanf("%ld", &tracer) != 1) return 2;
  // EINVAL: no Yama in this kernel, so nothing to name.
  if (tracer > 0 && prctl(PR_SET_PTRACER, tracer, 0, 0, 0) != 0 && errno != EINVAL) {
    std::perror("prctl(PR_SET_PTRACER)");
    return 3;
  }
  std::printf("ok\n");
  std::fflush(stdout);
  for (unsigned long n = 0;; ++n) {
    nk_debug_target_tick(n);
    // Mostly asleep, so that a debugger ending while it runs leaves it
    // running with the breakpoint trap in place (what the test checks).
    usleep(200 * 1000);
  }
}
