#pragma once

// libnodekeeper: the C ABI for applications and runtimes (energy manager).
// Every function returns 0 or a negative errno and never throws. The library
// also works with no call at all: it initialises itself when loaded, reads
// NODEKEEPER_POWER_BUDGET_MW, and attaches to LLVM libomp as an OMPT tool
// (OMP_TOOL_LIBRARIES=libnodekeeper.so).

#include <stdint.h>

#if defined(NK_BUILDING_LIBRARY)
#define NK_EXPORT __attribute__((visibility("default")))
#else
#define NK_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the client (idempotent; also run automatically when the library loads). */
NK_EXPORT int nk_init(void);
/* Stops the client and unregisters the app (idempotent; also run at exit). */
NK_EXPORT int nk_finalize(void);
/* States the app's power budget in milliwatts (Shafik et al.'s `#pragma omp budget`). It must be positive
   (-EINVAL otherwise); the daemon refuses one above the node's power cap. */
NK_EXPORT int nk_set_power_budget_mw(uint64_t mw);
/* The thread count D the daemon asks for; -EAGAIN while it has not decided. */
NK_EXPORT int nk_get_thread_count(uint32_t* d);
/* Applies a pending D with omp_set_num_threads(); call between parallel regions. */
NK_EXPORT int nk_apply_thread_count(void);
/* A static description of a return code; never NULL. */
NK_EXPORT const char* nk_strerror(int err);

#ifdef __cplusplus
}
#endif
