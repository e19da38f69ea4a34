// The C ABI: each entry point catches everything and returns 0 or a
// negative errno.

#include "nodekeeper/nodekeeper.h"

#include <cerrno>
#include <cstring>

#include "c_api_guard.h"
#include "client.h"
#include "ompt_tool.h"

using nk::client::Client;
using nk::client::guarded;

namespace {

__attribute__((constructor)) void nkAutoInit() { (void)nk_init(); }
__attribute__((destructor)) void nkAutoFinalize() { (void)nk_finalize(); }

}  // namespace

extern "C" {

NK_EXPORT int nk_init(void) {
  return guarded([] { return Client::instance().init(); });
}

NK_EXPORT int nk_finalize(void) {
  return guarded([] { return Client::instance().finalize(); });
}

NK_EXPORT int nk_set_power_budget_mw(uint64_t mw) {
  return guarded([mw] { return Client::instance().setPowerBudgetMw(mw); });
}

NK_EXPORT int nk_get_thread_count(uint32_t* d) {
  return guarded([d] { return Client::instance().threadCount(d); });
}

NK_EXPORT int nk_apply_thread_count(void) {
  return guarded([] { return Client::instance().applyThreadCount(); });
}

NK_EXPORT const char* nk_strerror(int err) {
  switch (err) {
    case 0: return "success";
    case -EINVAL: return "invalid argument";
    case -EAGAIN: return "not yet: no thread count decided, or no ready task may run now";
    case -ENOSYS: return "no OpenMP runtime in the process";
    case -ESHUTDOWN: return "library finalized";
    case -ENOMEM: return "out of memory";
    case -EIO: return "internal error";
    default: return "unknown error";
  }
}

// The OMPT entry point LLVM libomp looks up (also via OMP_TOOL_LIBRARIES).
NK_EXPORT ompt_start_tool_result_t* ompt_start_tool(unsigned int omp_version, const char* runtime_version) {
  try {
    return nk::client::OmptTool::startTool(omp_version, runtime_version);
  } catch (...) {
    return nullptr;
  }
}

}  // extern "C"
