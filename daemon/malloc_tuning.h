#pragma once

namespace nk {

// glibc's allocator set for a recorder that takes millions of task events a
// second into a graph that grows by hundreds of megabytes: the heap grows in
// 64 MiB steps onto transparent huge pages (a 4 KiB page fault each time
// the graph grows was a third of the daemon's CPU on a 6 M-task program),
// transient buffers under 32 MiB come from the heap instead of a fresh
// mmap each, and free memory is given back when a session ends
// (malloc_trim), not as each buffer is freed. Four arenas, not glibc's 8 a
// core: on huge pages each arena costs at least one 2 MiB page, and one per
// thread that ever allocated made the idle daemon 52 MB (27 MB with four;
// the recorder's pace and peak were no worse on the 30 M-task bench, each
// thread's tcache taking the small allocations). Tunables are read only when a
// program starts, so the first call re-executes the daemon with them
// added to GLIBC_TUNABLES; a setting the caller made is kept, the caller's
// GLIBC_TUNABLES is restored after the re-exec, and when the re-exec fails
// the daemon runs on as it is.
class MallocTuning {
 public:
  static void applyByReexec(char** argv);
};

}  // namespace nk
