#include "sysfs_cpu_freq.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "base/units.h"
#include "sysfs_file.h"

namespace nk {

namespace {

// The kernel prints affected_cpus space separated; a cpulist ("0-3,8") is
// accepted too so that a hand-made tree in either format works.
Result<std::vector<uint32_t>> readCpus(const std::filesystem::path& path) {
  auto text = SysfsFile::readText(path);
  if (!text) return text.error();
  std::vector<uint32_t> cpus;
  for (std::string_view word : splitWhitespace(*text)) {
    if (word.find_first_of(",-") != std::string_view::npos && word.front() != '-') {
      auto list = parseCpuList(word);
      if (!list) return unavailable(path.string() + ": " + list.error().message);
      cpus.insert(cpus.end(), list->begin(), list->end());
      continue;
    }
    auto cpu = SysfsFile::parseUint64(word, path);
    if (!cpu) return cpu.error();
    if (*cpu > std::numeric_limits<uint32_t>::max())
      return unavailable(path.string() + ": CPU number " + std::string(word) + " is out of range");
    cpus.push_back(static_cast<uint32_t>(*cpu));
  }
  if (cpus.empty()) return unavailable(path.string() + ": expected a list of CPUs, found nothing");
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

// Optional files: absence is a fact about the driver, not an error. Any
// other failure (garbage, EIO) still is.
bool missing(const Error& error, const std::filesystem::path& path) {
  return error.code == ErrorCode::kUnavailable && !SysfsFile::exists(path);
}

}  // namespace

SysfsCpuFreq::SysfsCpuFreq(std::filesystem::path root)
    : cpufreq_dir_(root / "sys/devices/system/cpu/cpufreq"),
      intel_pstate_status_(root / "sys/devices/system/cpu/intel_pstate/status") {}

std::filesystem::path SysfsCpuFreq::policyDir(uint32_t policy) const {
  return cpufreq_dir_ / ("policy" + std::to_string(policy));
}

Result<std::vector<uint32_t>> SysfsCpuFreq::policyIds() {
  auto entries = SysfsFile::listIndexed(cpufreq_dir_, "policy");
  if (!entries) {
    Error error = entries.error();
    if (!SysfsFile::exists(cpufreq_dir_)) error.message += " (no cpufreq driver loaded?)";
    return error;
  }
  std::vector<uint32_t> ids;
  for (const auto& entry : *entries) ids.push_back(entry.index);
  return ids;
}

Result<CpuFreqPolicy> SysfsCpuFreq::readPolicy(uint32_t policy) {
  const std::filesystem::path dir = policyDir(policy);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return notFound(dir.string() + ": no such cpufreq policy");

  CpuFreqPolicy p;
  p.id = policy;

  auto cpus = readCpus(dir / "affected_cpus");
  if (!cpus) return cpus.error();
  p.affected_cpus = std::move(*cpus);

  if (auto driver = SysfsFile::readText(dir / "scaling_driver")) {
    p.driver = std::move(*driver);
  } else if (!missing(driver.error(), dir / "scaling_driver")) {
    return driver.error();
  }

  auto governor = SysfsFile::readText(dir / "scaling_governor");
  if (!governor) return governor.error();
  if (governor->empty())
    return unavailable((dir / "scaling_governor").string() + ": expected a governor name, found nothing");
  p.governor = std::move(*governor);

  if (auto governors = SysfsFile::readWords(dir / "scaling_available_governors")) {
    p.available_governors = std::move(*governors);
  } else if (!missing(governors.error(), dir / "scaling_available_governors")) {
    return governors.error();
  }

  struct Required {
    const char* file;
    uint64_t* out;
  };
  for (const Required& r : {Required{"scaling_cur_freq", &p.cur_khz}, Required{"scaling_min_freq", &p.min_khz},
                            Required{"scaling_max_freq", &p.max_khz},
                            Required{"cpuinfo_min_freq", &p.cpuinfo_min_khz},
                            Required{"cpuinfo_max_freq", &p.cpuinfo_max_khz}}) {
    auto value = SysfsFile::readUint64(dir / r.file);
    if (!value) return value.error();
    *r.out = *value;
  }

  // Every governor but userspace makes the kernel print "<unsupported>".
  if (auto setspeed = SysfsFile::readText(dir / "scaling_setspeed")) {
    if (*setspeed != "<unsupported>") {
      auto khz = SysfsFile::parseUint64(*setspeed, dir / "scaling_setspeed");
      if (!khz) return khz.error();
      p.setspeed_khz = *khz;
    }
  } else if (!missing(setspeed.error(), dir / "scaling_setspeed")) {
    return setspeed.error();
  }

  // acpi-cpufreq lists the table highest first; callers want it ascending.
  if (auto table = SysfsFile::readUint64List(dir / "scaling_available_frequencies")) {
    p.available_khz = std::move(*table);
    std::sort(p.available_khz.begin(), p.available_khz.end());
    p.available_khz.erase(std::unique(p.available_khz.begin(), p.available_khz.end()), p.available_khz.end());
  } else if (!missing(table.error(), dir / "scaling_available_frequencies")) {
    return table.error();
  }

  // In passive mode intel_pstate registers as "intel_cpufreq", so the driver
  // name alone mostly tells; the global status file, when readable, has the
  // final word.
  p.intel_pstate_active = p.driver == "intel_pstate";
  if (p.intel_pstate_active) {
    if (auto status = SysfsFile::readText(intel_pstate_status_)) p.intel_pstate_active = *status == "active";
  }
  return p;
}

Result<uint64_t> SysfsCpuFreq::readCurrentKhz(uint32_t policy) {
  std::lock_guard lock(current_mutex_);
  auto it = current_.find(policy);
  if (it == current_.end()) it = current_.emplace(policy, HeldSysfsFile(policyDir(policy) / "scaling_cur_freq")).first;
  return it->second.readUint64();
}

Status SysfsCpuFreq::setMinKhz(uint32_t policy, uint64_t khz) {
  return SysfsFile::write(policyDir(policy) / "scaling_min_freq", khz);
}

Status SysfsCpuFreq::setMaxKhz(uint32_t policy, uint64_t khz) {
  return SysfsFile::write(policyDir(policy) / "scaling_max_freq", khz);
}

Status SysfsCpuFreq::setSpeedKhz(uint32_t policy, uint64_t khz) {
  return SysfsFile::write(policyDir(policy) / "scaling_setspeed", khz);
}

// The kernel matches the governor name exactly; whitespace in it is always
// a caller bug, and a newline could smuggle a second value into a fake tree.
Status SysfsCpuFreq::setGovernor(uint32_t policy, std::string_view governor) {
  if (governor.empty()) return invalidArgument("empty governor name");
  for (char c : governor) {
    auto u = static_cast<unsigned char>(c);
    if (std::isspace(u) || std::iscntrl(u))
      return invalidArgument("governor name '" + std::string(trim(governor)) +
                             "' contains whitespace or control characters");
  }
  return SysfsFile::write(policyDir(policy) / "scaling_governor", governor);
}

}  // namespace nk
