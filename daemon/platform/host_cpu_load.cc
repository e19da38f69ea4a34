#include "host_cpu_load.h"

#include <algorithm>
#include <string_view>

#include "base/units.h"
#include "sysfs_file.h"

namespace nk {

namespace {

// /proc/stat of a big machine (thousands of interrupt counters on the intr
// line) is far beyond a sysfs page.
constexpr size_t kMaxStatBytes = 16 * 1024 * 1024;

struct CpuTimes {
  uint64_t busy = 0;
  uint64_t total = 0;
};

}  // namespace

HostCpuLoad::HostCpuLoad(std::filesystem::path root) : stat_path_(root / "proc/stat") {}

Result<std::vector<double>> HostCpuLoad::sample() {
  auto text = SysfsFile::readText(stat_path_, kMaxStatBytes);
  if (!text) return text.error();

  std::vector<CpuTimes> times;
  std::vector<bool> present;
  std::string_view rest = *text;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    auto words = splitWhitespace(line);
    if (words.empty()) continue;
    // "cpu" alone is the sum over all CPUs.
    auto cpu = SysfsFile::indexAfterPrefix(words[0], "cpu");
    if (!cpu) continue;
    // user nice system idle [iowait irq softirq steal]: kernels before 2.6
    // stop after idle. guest and guest_nice that follow are already counted
    // in user and nice, so adding them would count that time twice.
    if (words.size() < 5)
      return unavailable(stat_path_.string() + ": line '" + std::string(line) + "' has fewer than 4 counters");
    uint64_t fields[8] = {};
    const size_t count = std::min<size_t>(words.size() - 1, 8);
    for (size_t i = 0; i < count; ++i) {
      auto value = SysfsFile::parseUint64(words[i + 1], stat_path_);
      if (!value) return value.error();
      fields[i] = *value;
    }
    CpuTimes t;
    for (uint64_t field : fields) t.total += field;
    const uint64_t idle = fields[3] + fields[4];
    t.busy = t.total >= idle ? t.total - idle : 0;
    if (times.size() <= *cpu) {
      times.resize(*cpu + 1);
      present.resize(*cpu + 1, false);
    }
    times[*cpu] = t;
    present[*cpu] = true;
  }
  if (times.empty()) return unavailable(stat_path_.string() + ": no per-CPU lines");

  // A CPU seen for the first time (or back from offline) has nothing to
  // compare with yet, and counters that went backwards (a reset) give no
  // usable difference either: both count as idle for this one interval.
  std::vector<double> utilisation(times.size(), 0.0);
  for (size_t cpu = 0; cpu < times.size(); ++cpu) {
    if (!present[cpu] || cpu >= last_present_.size() || !last_present_[cpu]) continue;
    if (times[cpu].total <= last_total_[cpu] || times[cpu].busy < last_busy_[cpu]) continue;
    const double dtotal = static_cast<double>(times[cpu].total - last_total_[cpu]);
    const double dbusy = static_cast<double>(times[cpu].busy - last_busy_[cpu]);
    utilisation[cpu] = std::clamp(dbusy / dtotal, 0.0, 1.0);
  }

  last_busy_.assign(times.size(), 0);
  last_total_.assign(times.size(), 0);
  for (size_t cpu = 0; cpu < times.size(); ++cpu) {
    last_busy_[cpu] = times[cpu].busy;
    last_total_[cpu] = times[cpu].total;
  }
  last_present_ = std::move(present);
  return utilisation;
}

}  // namespace nk
