// Feeds arbitrary contents to the files the sysfs readers parse. The input
// is split at '|' into chunks, one per file below in order; files without a
// chunk are deleted, so vanished files get exercised as well as garbage.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "platform/hwmon_thermal.h"
#include "platform/sysfs_cpu_freq.h"
#include "platform/sysfs_rapl.h"
#include "testlib/temp_dir.h"

namespace {

const char* const kFiles[] = {
    "sys/devices/system/cpu/cpufreq/policy0/affected_cpus",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_driver",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_available_governors",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_min_freq",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq",
    "sys/devices/system/cpu/cpufreq/policy0/cpuinfo_min_freq",
    "sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_setspeed",
    "sys/devices/system/cpu/cpufreq/policy0/scaling_available_frequencies",
    "sys/devices/system/cpu/intel_pstate/status",
    "sys/class/powercap/intel-rapl:0/name",
    "sys/class/powercap/intel-rapl:0/energy_uj",
    "sys/class/powercap/intel-rapl:0/max_energy_range_uj",
    "sys/class/powercap/intel-rapl:0/constraint_0_power_limit_uw",
    "sys/class/powercap/intel-rapl:0/enabled",
    "sys/devices/platform/coretemp.0/hwmon/hwmon0/name",
    "sys/devices/platform/coretemp.0/hwmon/hwmon0/temp1_label",
    "sys/devices/platform/coretemp.0/hwmon/hwmon0/temp1_input",
    "sys/devices/platform/coretemp.0/hwmon/hwmon0/temp2_label",
    "sys/devices/platform/coretemp.0/hwmon/hwmon0/temp2_input",
};

std::filesystem::path root;

// Built once: directories, the links a real sysfs has, and a RAPL subzone
// that readZones must skip. Only file contents change per input.
bool makeTree() {
  // Static: removed when the fuzzer exits normally.
  static const nk::test::TempDir dir("fuzz-sysfs");
  root = dir.path();
  std::error_code ec;
  for (const char* file : kFiles) std::filesystem::create_directories((root / file).parent_path(), ec);
  std::filesystem::create_directories(root / "sys/devices/system/cpu/cpufreq/policy1x", ec);
  std::filesystem::create_directories(root / "sys/class/powercap/intel-rapl:0:0", ec);
  std::filesystem::create_directories(root / "sys/class/hwmon", ec);
  std::filesystem::create_directory_symlink("../../devices/platform/coretemp.0/hwmon/hwmon0",
                                            root / "sys/class/hwmon/hwmon0", ec);
  std::filesystem::create_directory_symlink("../../../coretemp.0",
                                            root / "sys/devices/platform/coretemp.0/hwmon/hwmon0/device", ec);
  return true;
}

void writeFile(const std::filesystem::path& path, std::string_view content) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = makeTree();
  if (!ready) return 0;

  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> chunks;
  while (!input.empty() && chunks.size() < std::size(kFiles)) {
    size_t bar = input.find('|');
    chunks.push_back(input.substr(0, bar));
    input = bar == std::string_view::npos ? std::string_view() : input.substr(bar + 1);
  }
  for (size_t i = 0; i < std::size(kFiles); ++i) {
    std::filesystem::path path = root / kFiles[i];
    if (i < chunks.size()) {
      writeFile(path, chunks[i]);
    } else {
      ::unlink(path.c_str());
    }
  }

  nk::SysfsCpuFreq cpufreq(root);
  (void)cpufreq.policyIds();
  (void)cpufreq.readPolicy(0);
  (void)cpufreq.readPolicy(1);
  (void)cpufreq.readCurrentKhz(0);
  nk::SysfsRapl rapl(root);
  (void)rapl.readZones();
  (void)rapl.readEnergyUj(0);
  nk::HwmonThermal thermal(root);
  (void)thermal.read();
  // The governor writer's own check, on the same arbitrary text.
  if (!chunks.empty()) (void)cpufreq.setGovernor(0, chunks.front());
  return 0;
}
