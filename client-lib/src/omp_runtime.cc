#include "omp_runtime.h"

#include <dlfcn.h>

namespace nk::client {

// omp_set_num_threads from the process's OpenMP runtime (libomp, or a
// libgomp-ABI runtime), or nullptr when none is loaded.
OmpRuntime::SetNumThreads OmpRuntime::setNumThreads() {
  return reinterpret_cast<SetNumThreads>(::dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
}

OmpRuntime::GetMaxThreads OmpRuntime::getMaxThreads() {
  return reinterpret_cast<GetMaxThreads>(::dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
}

}  // namespace nk::client
