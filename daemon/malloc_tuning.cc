#include "malloc_tuning.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace nk {

void MallocTuning::applyByReexec(char** argv) {
  static constexpr const char* kTunables[] = {"glibc.malloc.hugetlb=1", "glibc.malloc.top_pad=67108864",
                                              "glibc.malloc.mmap_threshold=33554432",
                                              "glibc.malloc.trim_threshold=134217728", "glibc.malloc.arena_max=4"};
  // Holds the caller's GLIBC_TUNABLES across the re-exec ("-" for none),
  // so that what the daemon starts inherits the caller's, not these.
  static constexpr const char* kMarker = "NK_MALLOC_TUNED_FROM";
  if (const char* original = std::getenv(kMarker)) {
    if (std::string(original) == "-") ::unsetenv("GLIBC_TUNABLES");
    else ::setenv("GLIBC_TUNABLES", original, 1);
    ::unsetenv(kMarker);
    // Run as /proc/self/exe, the process is named "exe" in ps, top, pgrep
    // and the journal's _COMM; its threads without a name of their own
    // inherit the name set here.
    const std::string_view program = argv[0] ? argv[0] : "nodekeeperd";
    const std::string name(program.substr(program.rfind('/') + 1));
    ::prctl(PR_SET_NAME, name.empty() ? "nodekeeperd" : name.c_str());
    return;
  }
  const char* before = std::getenv("GLIBC_TUNABLES");
  std::string tunables = before ? before : "";
  for (const char* tunable : kTunables) {
    const std::string name = std::string(tunable).substr(0, std::string(tunable).find('='));
    if (tunables.find(name + "=") != std::string::npos) continue;  // the caller's choice
    tunables += (tunables.empty() ? "" : ":") + std::string(tunable);
  }
  const std::string original = before ? before : "-";
  ::setenv(kMarker, original.c_str(), 1);
  ::setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  // Not re-executed (no /proc): the environment as it was found.
  ::unsetenv(kMarker);
  if (before) ::setenv("GLIBC_TUNABLES", original.c_str(), 1);
  else ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace nk
