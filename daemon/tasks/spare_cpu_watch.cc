#include "tasks/spare_cpu_watch.h"

#include <algorithm>

namespace nk {

void SpareCpuWatch::observe(const Sample& sample) {
  spare_cpus_ = std::max(0.0, sample.cpus - sample.busy_cpus);
  spare_ = spare_cpus_ >= min_spare_cpus_;
}

void SpareCpuWatch::forget() {
  spare_cpus_ = 0;
  spare_ = false;
}

}  // namespace nk
