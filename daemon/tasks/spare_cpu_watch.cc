#include "tasks/spare_cpu_watch.h"

#include <algorithm>

namespace nk {

void SpareCpuWatch::observe(const Sample& sample) {
  const double busy_by_others = std::max(0.0, sample.busy_cpus - sample.own_cpus);
  spare_cpus_ = std::max(0.0, sample.cpus - busy_by_others);
  spare_ = spare_cpus_ >= min_spare_cpus_;
}

}  // namespace nk
