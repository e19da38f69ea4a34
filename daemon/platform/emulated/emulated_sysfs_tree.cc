#include "emulated_sysfs_tree.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>
#include <unordered_map>

#include "base/units.h"
#include "platform/trusted_directory.h"

namespace nk {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMarkerName = ".nodekeeper-emulated";
constexpr const char* kUnsupported = "<unsupported>\n";
// What powercap shows for PL1's window on the Xeons we emulate (about 1 s).
constexpr uint64_t kTimeWindowUs = 999424;
// coretemp's "high" threshold sits this far below TjMax on these parts.
constexpr double kHighBelowTjmaxC = 20;
// Largest value the kernel accepts for a frequency (sscanf "%u").
constexpr uint64_t kMaxUnsigned32 = 0xffffffffULL;

std::string line(std::string_view text) { return std::string(text) + "\n"; }
std::string line(uint64_t value) { return std::to_string(value) + "\n"; }

std::string milliCelsiusLine(double celsius) {
  // Clamped so that a runaway value can never overflow the conversion.
  double milli = std::clamp(celsius * 1000.0, -273150.0, 1e7);
  return std::to_string(static_cast<long long>(std::llround(milli))) + "\n";
}

Error errnoError(const fs::path& path, std::string_view action, int err) {
  return unavailable(path.string() + ": " + std::string(action) + ": " + std::strerror(err));
}

Status writeFile(const fs::path& path, std::string_view text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errnoError(path, "create", errno);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) return errnoError(path, "write", n < 0 ? err : EIO);
  return {};
}

Status makeDirs(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return unavailable(path.string() + ": mkdir: " + ec.message());
  return {};
}

Status makeSymlink(const fs::path& target, const fs::path& link) {
  std::error_code ec;
  fs::create_directory_symlink(target, link, ec);
  if (ec) return unavailable(link.string() + ": symlink: " + ec.message());
  return {};
}

struct RawFile {
  bool exists = false;
  std::string text;
  struct timespec mtime = {};
};

// Control files are tiny; anything past a page is garbage anyway.
RawFile readRaw(const fs::path& path) {
  RawFile raw;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return raw;
  struct stat st = {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    raw.exists = true;
    raw.mtime = st.st_mtim;
    char buffer[4096];
    ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
    if (n > 0) raw.text.assign(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return raw;
}

std::optional<uint64_t> parseUnsigned(std::string_view text, uint64_t max) {
  std::string_view s = trim(text);
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || value > max) return std::nullopt;
  return value;
}

std::optional<double> parseMilliCelsius(std::string_view text) {
  std::string_view s = trim(text);
  long long value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return static_cast<double>(value) / 1000.0;
}

bool sameTime(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// A file the kernel updates: kept open and rewritten in place, so a reader
// (which may keep its own descriptor and pread, as on real sysfs) never
// sees the file missing or empty, and an update costs one or two syscalls.
struct OutputFile {
  int fd = -1;
  std::string shown;

  void open(const fs::path& path) {
    RawFile raw = readRaw(path);
    shown = raw.text;
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  }
  void write(const std::string& text) {
    if (fd < 0 || text == shown) return;
    // New bytes first, then cut the tail: the file is never empty, and a
    // shorter value leaves at worst a stray trailing newline for a moment.
    if (::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return;
    if (text.size() < shown.size() && ::ftruncate(fd, static_cast<off_t>(text.size())) != 0) return;
    shown = text;
  }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// A file the daemon writes. `shown` and `mtime` are what it held when we
// last looked or wrote, so that a new write is recognised even when it
// repeats the value shown.
struct ControlFile {
  fs::path path;
  std::string shown;
  struct timespec mtime = {};
  bool empty_pending = false;

  bool changed(const RawFile& raw) const { return raw.text != shown || !sameTime(raw.mtime, mtime); }

  // Leaves the file showing `canonical`, as the kernel shows the effective
  // value whatever was written.
  void settle(const RawFile& raw, const std::string& canonical) {
    if (raw.exists && raw.text == canonical) {
      shown = canonical;
      mtime = raw.mtime;
      empty_pending = false;
      return;
    }
    // An empty file is most likely a writer between its O_TRUNC and its
    // write(); rewriting now could interleave with that write, so give it
    // one more round before restoring the value.
    if (raw.exists && raw.text.empty() && !empty_pending) {
      empty_pending = true;
      return;
    }
    empty_pending = false;
    rewrite(canonical);
  }

  void rewrite(const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()))
      (void)::ftruncate(fd, static_cast<off_t>(text.size()));
    struct stat st = {};
    if (::fstat(fd, &st) == 0) mtime = st.st_mtim;
    ::close(fd);
    shown = text;
  }
};

std::string markerText(const NodeProfile& p) {
  // Everything that shapes the tree or its fixed files; a profile that
  // differs in any of it gets a fresh tree.
  std::string text = "nodekeeper emulated sysfs tree\n";
  text += "profile=" + p.name + "\n";
  text += "cores=" + std::to_string(p.cores()) + "\n";
  text += "topology=" + p.hwlocSynthetic() + "\n";
  text += "driver=" + p.driver + "\n";
  text += "frequencies_khz=";
  for (uint64_t khz : p.frequencies_khz) text += std::to_string(khz) + " ";
  text += "\ngovernors=";
  for (const std::string& g : p.governors) text += g + " ";
  text += "\ntransition_latency_ns=" + std::to_string(p.transition_latency_ns) + "\n";
  text += "rapl_max_energy_range_uj=" + std::to_string(p.rapl_max_energy_range_uj) + "\n";
  text += "rapl_default_limit_uw=" + std::to_string(std::llround(p.rapl_default_limit_w * 1e6)) + "\n";
  text += "tjmax_mc=" + std::to_string(std::llround(p.tjmax_c * 1000)) + "\n";
  return text;
}

std::vector<uint32_t> cpusOfCore(const NodeProfile& p, uint32_t core) {
  std::vector<uint32_t> cpus;
  for (uint32_t t = 0; t < p.threads_per_core; ++t) cpus.push_back(core * p.threads_per_core + t);
  return cpus;
}

std::vector<uint32_t> cpusOfPackage(const NodeProfile& p, uint32_t package) {
  std::vector<uint32_t> cpus;
  for (uint32_t i = 0; i < p.cores_per_package; ++i)
    for (uint32_t cpu : cpusOfCore(p, package * p.cores_per_package + i)) cpus.push_back(cpu);
  return cpus;
}

// As cpufreq_show_cpus() prints them: space separated, no trailing space.
std::string spaceSeparated(const std::vector<uint32_t>& cpus) {
  std::string text;
  for (uint32_t cpu : cpus) text += (text.empty() ? "" : " ") + std::to_string(cpu);
  return text + "\n";
}

fs::path policyPath(const fs::path& sys, uint32_t policy) {
  return sys / "devices/system/cpu/cpufreq" / ("policy" + std::to_string(policy));
}
fs::path raplPath(const fs::path& sys, uint32_t package) {
  return sys / "devices/virtual/powercap/intel-rapl" / ("intel-rapl:" + std::to_string(package));
}
fs::path hwmonPath(const fs::path& sys, uint32_t package) {
  std::string n = std::to_string(package);
  return sys / "devices/platform" / ("coretemp." + n) / "hwmon" / ("hwmon" + n);
}

class TreeBuilder {
 public:
  explicit TreeBuilder(fs::path sys) : sys_(std::move(sys)) {}
  void file(const fs::path& relative, std::string_view text) {
    if (!status_) return;
    fs::path path = sys_ / relative;
    if (Status s = dir(path.parent_path()); !s) status_ = s;
    else if (Status w = writeFile(path, text); !w) status_ = w;
  }
  void symlink(const fs::path& target, const fs::path& relative_link) {
    if (!status_) return;
    fs::path link = sys_ / relative_link;
    if (Status s = dir(link.parent_path()); !s) status_ = s;
    else if (Status l = makeSymlink(target, link); !l) status_ = l;
  }
  const Status& status() const { return status_; }

 private:
  // A few hundred files share a few dozen directories; asking the file
  // system about every path component for each file was most of the cost.
  Status dir(const fs::path& path) {
    if (path == last_dir_) return {};
    if (Status s = makeDirs(path); !s) return s;
    last_dir_ = path;
    return {};
  }

  fs::path sys_;
  fs::path last_dir_;
  Status status_;
};

Status buildTree(const fs::path& sys, const NodeProfile& p) {
  TreeBuilder b(sys);
  const bool intel_pstate = p.driver == "intel_pstate";
  const uint64_t min_khz = p.frequencies_khz.front();
  const uint64_t max_khz = p.frequencies_khz.back();
  const uint32_t cpu_count = p.cores() * p.threads_per_core;
  std::vector<uint32_t> every_cpu;
  for (uint32_t cpu = 0; cpu < cpu_count; ++cpu) every_cpu.push_back(cpu);
  const std::string all_cpus = line(formatCpuList(every_cpu));
  const fs::path cpu_dir = "devices/system/cpu";
  b.file(cpu_dir / "online", all_cpus);
  b.file(cpu_dir / "possible", all_cpus);
  b.file(cpu_dir / "present", all_cpus);

  for (uint32_t core = 0; core < p.cores(); ++core) {
    const uint32_t package = core / p.cores_per_package;
    const std::vector<uint32_t> siblings = cpusOfCore(p, core);
    const std::vector<uint32_t> package_cpus = cpusOfPackage(p, package);
    const uint32_t policy = siblings.front();
    for (uint32_t cpu : siblings) {
      const fs::path dir = cpu_dir / ("cpu" + std::to_string(cpu));
      b.file(dir / "online", "1\n");
      b.file(dir / "topology/physical_package_id", line(package));
      b.file(dir / "topology/core_id", line(core % p.cores_per_package));
      b.file(dir / "topology/thread_siblings_list", line(formatCpuList(siblings)));
      b.file(dir / "topology/core_cpus_list", line(formatCpuList(siblings)));
      b.file(dir / "topology/core_siblings_list", line(formatCpuList(package_cpus)));
      b.file(dir / "topology/package_cpus_list", line(formatCpuList(package_cpus)));
      b.symlink(fs::path("../cpufreq") / ("policy" + std::to_string(policy)), dir / "cpufreq");
    }

    const fs::path dir = fs::path(cpu_dir) / "cpufreq" / ("policy" + std::to_string(policy));
    b.file(dir / "affected_cpus", spaceSeparated(siblings));
    b.file(dir / "related_cpus", spaceSeparated(siblings));
    b.file(dir / "cpuinfo_min_freq", line(min_khz));
    b.file(dir / "cpuinfo_max_freq", line(max_khz));
    b.file(dir / "cpuinfo_transition_latency", line(p.transition_latency_ns));
    b.file(dir / "scaling_driver", line(p.driver));
    std::string governors;
    if (intel_pstate) {
      // A setpolicy driver: the kernel prints the fixed pair without the
      // trailing space it leaves after real governors.
      for (const std::string& g : p.governors) governors += (governors.empty() ? "" : " ") + g;
      governors += "\n";
    } else {
      for (const std::string& g : p.governors) governors += g + " ";
      governors += "\n";
      std::string table;
      for (uint64_t khz : p.frequencies_khz) table += std::to_string(khz) + " ";
      b.file(dir / "scaling_available_frequencies", table + "\n");
    }
    b.file(dir / "scaling_available_governors", governors);
    b.file(dir / "scaling_governor", line(p.default_governor));
    b.file(dir / "scaling_min_freq", line(min_khz));
    b.file(dir / "scaling_max_freq", line(max_khz));
    b.file(dir / "scaling_cur_freq", line(min_khz));
    b.file(dir / "scaling_setspeed", p.default_governor == "userspace" ? line(min_khz) : kUnsupported);
  }
  if (intel_pstate) {
    b.file(cpu_dir / "intel_pstate/status", "active\n");
    b.file(cpu_dir / "intel_pstate/no_turbo", "0\n");
  }

  const uint64_t limit_uw = static_cast<uint64_t>(std::llround(p.rapl_default_limit_w * 1e6));
  b.file("devices/virtual/powercap/intel-rapl/enabled", "1\n");
  b.symlink("../../devices/virtual/powercap/intel-rapl", "class/powercap/intel-rapl");
  for (uint32_t package = 0; package < p.packages; ++package) {
    const std::string zone = "intel-rapl:" + std::to_string(package);
    const fs::path dir = fs::path("devices/virtual/powercap/intel-rapl") / zone;
    b.file(dir / "name", line("package-" + std::to_string(package)));
    b.file(dir / "energy_uj", "0\n");
    b.file(dir / "max_energy_range_uj", line(p.rapl_max_energy_range_uj));
    b.file(dir / "constraint_0_name", "long_term\n");
    b.file(dir / "constraint_0_power_limit_uw", line(limit_uw));
    b.file(dir / "constraint_0_time_window_us", line(kTimeWindowUs));
    b.file(dir / "constraint_0_max_power_uw", line(limit_uw));
    b.file(dir / "enabled", "1\n");
    b.symlink(fs::path("../../devices/virtual/powercap/intel-rapl") / zone, fs::path("class/powercap") / zone);
  }

  const std::string crit = milliCelsiusLine(p.tjmax_c);
  const std::string high = milliCelsiusLine(p.tjmax_c - kHighBelowTjmaxC);
  const std::string ambient = milliCelsiusLine(p.ambient_c);
  for (uint32_t package = 0; package < p.packages; ++package) {
    const std::string n = std::to_string(package);
    const fs::path dir = fs::path("devices/platform") / ("coretemp." + n) / "hwmon" / ("hwmon" + n);
    b.file(dir / "name", "coretemp\n");
    auto sensor = [&](uint32_t index, const std::string& label) {
      const std::string prefix = "temp" + std::to_string(index);
      b.file(dir / (prefix + "_label"), line(label));
      b.file(dir / (prefix + "_input"), ambient);
      b.file(dir / (prefix + "_crit"), crit);
      b.file(dir / (prefix + "_max"), high);
      b.file(dir / (prefix + "_crit_alarm"), "0\n");
    };
    sensor(1, "Package id " + n);
    for (uint32_t core_id = 0; core_id < p.cores_per_package; ++core_id)
      sensor(core_id + 2, "Core " + std::to_string(core_id));
    b.symlink(fs::path("../../devices/platform") / ("coretemp." + n) / "hwmon" / ("hwmon" + n),
              fs::path("class/hwmon") / ("hwmon" + n));
  }
  b.file(kMarkerName, markerText(p));
  return b.status();
}

bool isEmptyDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_empty(path, ec) && !ec;
}

Status removeTree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return unavailable(path.string() + ": remove: " + ec.message());
  return {};
}

}  // namespace

struct EmulatedSysfsTree::State {
  struct Policy {
    uint32_t id = 0;
    std::string governor;
    uint64_t min_request_khz = 0;
    uint64_t max_request_khz = 0;
    uint64_t min_khz = 0;
    uint64_t max_khz = 0;
    uint64_t setspeed_request_khz = 0;
    uint64_t cur_khz = 0;
    ControlFile governor_file, min_file, max_file, setspeed_file;
    OutputFile cur_freq;
  };
  struct Package {
    uint64_t limit_uw = 0;
    bool enabled = true;
    ControlFile limit_file, enabled_file;
    fs::path energy_path;
    OutputFile energy;
    OutputFile package_temp;
    std::vector<fs::path> core_temp_paths;
    std::vector<OutputFile> core_temp;
  };

  struct Watch {
    bool package = false;
    uint32_t index = 0;  // core or package
  };

  bool reused = false;
  std::vector<Policy> policies;  // index = core
  std::vector<Package> packages;
  int inotify_fd = -1;
  std::unordered_map<int, Watch> watches;

  ~State() {
    if (inotify_fd >= 0) ::close(inotify_fd);
    for (Policy& p : policies) p.cur_freq.close();
    for (Package& p : packages) {
      p.energy.close();
      p.package_temp.close();
      for (OutputFile& f : p.core_temp) f.close();
    }
  }
};

EmulatedSysfsTree::EmulatedSysfsTree(fs::path root, NodeProfile profile)
    : root_(std::move(root)), profile_(std::move(profile)), state_(std::make_unique<State>()) {}
EmulatedSysfsTree::~EmulatedSysfsTree() = default;
EmulatedSysfsTree::EmulatedSysfsTree(EmulatedSysfsTree&&) noexcept = default;
EmulatedSysfsTree& EmulatedSysfsTree::operator=(EmulatedSysfsTree&&) noexcept = default;

Result<EmulatedSysfsTree> EmulatedSysfsTree::open(fs::path root, const NodeProfile& profile) {
  if (Status valid = profile.validate(); !valid) return valid.error();
  if (Status s = makeDirs(root); !s) return s.error();
  // The daemon reads its controls back from this tree as root: another user
  // must not be able to plant or swap anything in it.
  auto trusted_root = TrustedDirectory::open(root);
  if (!trusted_root) return Error{trusted_root.error().code, "emulated node tree: " + trusted_root.error().message};
  const fs::path sys = root / "sys";
  const fs::path marker = sys / kMarkerName;
  const std::string expected = markerText(profile);

  std::error_code ec;
  bool sys_exists = fs::exists(fs::symlink_status(sys, ec));
  bool reuse = false;
  if (sys_exists) {
    RawFile found = readRaw(marker);
    if (found.exists && found.text == expected) {
      auto trusted_sys = trusted_root->subdirectory("sys", false);
      if (!trusted_sys) return Error{trusted_sys.error().code, "emulated node tree: " + trusted_sys.error().message};
      if (Status s = trusted_sys->checkTree(); !s) return Error{s.error().code, "emulated node tree: " + s.error().message};
      reuse = true;
    } else if (!found.exists && !isEmptyDirectory(sys)) {
      // Without our marker this may be anything, even a real /sys handed
      // in by mistake: never delete it.
      return failedPrecondition(sys.string() + " exists and is not an emulated node's tree; refusing to replace it");
    }
  }
  if (!reuse) {
    // Built aside and renamed into place, so that a crash half-way never
    // leaves a partial tree that looks like ours.
    const fs::path staging = root / ".sys.new";
    const fs::path old = root / ".sys.old";
    if (Status s = removeTree(staging); !s) return s.error();
    if (Status s = buildTree(staging, profile); !s) {
      (void)removeTree(staging);
      return s.error();
    }
    if (sys_exists) {
      if (Status s = removeTree(old); !s) return s.error();
      fs::rename(sys, old, ec);
      if (ec) return unavailable(sys.string() + ": rename: " + ec.message());
    }
    fs::rename(staging, sys, ec);
    if (ec) return unavailable(sys.string() + ": rename: " + ec.message());
    if (sys_exists) (void)removeTree(old);
  }

  EmulatedSysfsTree tree(root, profile);
  State& state = *tree.state_;
  state.reused = reuse;
  const uint64_t cpuinfo_min = profile.frequencies_khz.front();
  const uint64_t cpuinfo_max = profile.frequencies_khz.back();
  state.policies.resize(profile.cores());
  for (uint32_t core = 0; core < profile.cores(); ++core) {
    State::Policy& p = state.policies[core];
    p.id = core * profile.threads_per_core;
    const fs::path dir = policyPath(sys, p.id);
    p.governor = profile.default_governor;
    p.min_request_khz = p.min_khz = cpuinfo_min;
    p.max_request_khz = p.max_khz = cpuinfo_max;
    p.governor_file.path = dir / "scaling_governor";
    p.min_file.path = dir / "scaling_min_freq";
    p.max_file.path = dir / "scaling_max_freq";
    p.setspeed_file.path = dir / "scaling_setspeed";
    p.cur_freq.open(dir / "scaling_cur_freq");
    if (p.cur_freq.fd < 0) return unavailable((dir / "scaling_cur_freq").string() + ": cannot open");
    p.cur_khz = parseUnsigned(p.cur_freq.shown, kMaxUnsigned32).value_or(cpuinfo_min);
    p.cur_khz = std::clamp(p.cur_khz, cpuinfo_min, cpuinfo_max);
    p.setspeed_request_khz = p.cur_khz;
  }
  const uint64_t default_limit_uw = static_cast<uint64_t>(std::llround(profile.rapl_default_limit_w * 1e6));
  state.packages.resize(profile.packages);
  for (uint32_t package = 0; package < profile.packages; ++package) {
    State::Package& pk = state.packages[package];
    const fs::path rapl = raplPath(sys, package);
    const fs::path hwmon = hwmonPath(sys, package);
    pk.limit_uw = default_limit_uw;
    pk.limit_file.path = rapl / "constraint_0_power_limit_uw";
    pk.enabled_file.path = rapl / "enabled";
    pk.energy_path = rapl / "energy_uj";
    pk.energy.open(pk.energy_path);
    pk.package_temp.open(hwmon / "temp1_input");
    if (pk.energy.fd < 0 || pk.package_temp.fd < 0) return unavailable(rapl.string() + ": cannot open outputs");
    pk.core_temp.resize(profile.cores_per_package);
    for (uint32_t core_id = 0; core_id < profile.cores_per_package; ++core_id) {
      fs::path path = hwmon / ("temp" + std::to_string(core_id + 2) + "_input");
      pk.core_temp_paths.push_back(path);
      pk.core_temp[core_id].open(path);
      if (pk.core_temp[core_id].fd < 0) return unavailable(path.string() + ": cannot open");
    }
  }
  // Watches are per file, not per directory: the outputs in the same
  // directories change every tick and would flood the queue.
  state.inotify_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (state.inotify_fd >= 0) {
    constexpr uint32_t kMask = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB;
    auto watch = [&](const fs::path& path, State::Watch target) {
      int wd = ::inotify_add_watch(state.inotify_fd, path.c_str(), kMask);
      if (wd < 0) return false;
      state.watches[wd] = target;
      return true;
    };
    bool all = true;
    for (uint32_t core = 0; core < state.policies.size(); ++core) {
      const State::Policy& p = state.policies[core];
      for (const fs::path* path : {&p.governor_file.path, &p.min_file.path, &p.max_file.path, &p.setspeed_file.path})
        all = watch(*path, {false, core}) && all;
    }
    for (uint32_t package = 0; package < state.packages.size(); ++package) {
      all = watch(state.packages[package].limit_file.path, {true, package}) && all;
      all = watch(state.packages[package].enabled_file.path, {true, package}) && all;
    }
    if (!all) {
      // Out of watches (fs.inotify.max_user_watches): poll instead.
      ::close(state.inotify_fd);
      state.inotify_fd = -1;
      state.watches.clear();
    }
  }

  // Pick up (and sanitise) whatever the controls hold, so that the first
  // readControls() of the node starts from the persisted values.
  for (uint32_t policy : tree.policyIds()) (void)tree.readControls(policy);
  for (uint32_t package = 0; package < profile.packages; ++package) (void)tree.readPowerLimitUw(package);
  return tree;
}

std::vector<uint32_t> EmulatedSysfsTree::policyIds() const {
  std::vector<uint32_t> ids;
  for (const State::Policy& p : state_->policies) ids.push_back(p.id);
  return ids;
}

uint32_t EmulatedSysfsTree::policyOfCore(uint32_t core) const { return core * profile_.threads_per_core; }

bool EmulatedSysfsTree::reused() const { return state_->reused; }

EmulatedPolicyControls EmulatedSysfsTree::readControls(uint32_t policy) {
  EmulatedPolicyControls controls;
  if (policy % profile_.threads_per_core != 0) return controls;
  const uint32_t core = policy / profile_.threads_per_core;
  if (core >= state_->policies.size()) return controls;
  State::Policy& p = state_->policies[core];
  const uint64_t cpuinfo_min = profile_.frequencies_khz.front();
  const uint64_t cpuinfo_max = profile_.frequencies_khz.back();

  // Governor: an unknown name is refused, as the kernel does with EINVAL.
  RawFile governor_raw = readRaw(p.governor_file.path);
  const std::string previous_governor = p.governor;
  if (p.governor_file.changed(governor_raw)) {
    std::string word(trim(governor_raw.text));
    if (std::find(profile_.governors.begin(), profile_.governors.end(), word) != profile_.governors.end())
      p.governor = word;
  }
  p.governor_file.settle(governor_raw, line(p.governor));
  if (p.governor != previous_governor && p.governor == "userspace") {
    // The userspace governor starts from wherever the policy runs now.
    p.setspeed_request_khz = p.cur_khz;
  }

  // Limits are kept as requests and resolved against each other, as the
  // kernel's frequency QoS does: min above max shows as max until max
  // rises again, but the request is not lost.
  RawFile min_raw = readRaw(p.min_file.path);
  RawFile max_raw = readRaw(p.max_file.path);
  if (p.min_file.changed(min_raw))
    if (auto khz = parseUnsigned(min_raw.text, kMaxUnsigned32)) p.min_request_khz = *khz;
  if (p.max_file.changed(max_raw))
    if (auto khz = parseUnsigned(max_raw.text, kMaxUnsigned32)) p.max_request_khz = *khz;
  p.max_khz = std::clamp(p.max_request_khz, cpuinfo_min, cpuinfo_max);
  p.min_khz = std::clamp(p.min_request_khz, cpuinfo_min, p.max_khz);
  if (profile_.driver == "acpi-cpufreq") {
    // cpufreq_frequency_table_verify(): at least one table entry must lie
    // within the limits, else max is raised to the next one above.
    const auto& table = profile_.frequencies_khz;
    bool any = std::any_of(table.begin(), table.end(), [&](uint64_t f) { return f >= p.min_khz && f <= p.max_khz; });
    if (!any) {
      auto next = std::upper_bound(table.begin(), table.end(), p.max_khz);
      if (next != table.end()) p.max_khz = *next;
    }
  }
  p.min_file.settle(min_raw, line(p.min_khz));
  p.max_file.settle(max_raw, line(p.max_khz));

  // scaling_setspeed shows the frequency the userspace governor set, or
  // "<unsupported>" under any other governor.
  RawFile setspeed_raw = readRaw(p.setspeed_file.path);
  if (p.governor == "userspace") {
    if (p.setspeed_file.changed(setspeed_raw))
      if (auto khz = parseUnsigned(setspeed_raw.text, kMaxUnsigned32)) p.setspeed_request_khz = *khz;
    uint64_t khz = std::clamp(p.setspeed_request_khz, p.min_khz, p.max_khz);
    if (profile_.driver == "acpi-cpufreq") {
      const auto& table = profile_.frequencies_khz;
      auto at_or_above = std::lower_bound(table.begin(), table.end(), khz);
      if (at_or_above != table.end() && *at_or_above <= p.max_khz) khz = *at_or_above;
    }
    controls.setspeed_khz = khz;
    p.setspeed_file.settle(setspeed_raw, line(khz));
  } else {
    p.setspeed_file.settle(setspeed_raw, kUnsupported);
  }

  controls.governor = p.governor;
  controls.min_khz = p.min_khz;
  controls.max_khz = p.max_khz;
  return controls;
}

bool EmulatedSysfsTree::watchingControls() const { return state_->inotify_fd >= 0; }

EmulatedControlChanges EmulatedSysfsTree::takeControlChanges() {
  EmulatedControlChanges changes;
  if (state_->inotify_fd < 0) {
    changes.everything = true;
    return changes;
  }
  std::vector<bool> policy_seen(state_->policies.size()), package_seen(state_->packages.size());
  alignas(struct inotify_event) char buffer[4096];
  while (true) {
    ssize_t n = ::read(state_->inotify_fd, buffer, sizeof buffer);
    if (n <= 0) break;  // EAGAIN: nothing more queued
    for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(struct inotify_event)) <= n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
      if (event->mask & IN_Q_OVERFLOW) changes.everything = true;
      auto found = state_->watches.find(event->wd);
      if (found == state_->watches.end()) continue;
      const State::Watch& w = found->second;
      if (w.package && !package_seen[w.index]) {
        package_seen[w.index] = true;
        changes.packages.push_back(w.index);
      } else if (!w.package && !policy_seen[w.index]) {
        policy_seen[w.index] = true;
        changes.policies.push_back(state_->policies[w.index].id);
      }
    }
  }
  return changes;
}

void EmulatedSysfsTree::writeCurrentFrequency(uint32_t policy, uint64_t khz) {
  if (policy % profile_.threads_per_core != 0) return;
  const uint32_t core = policy / profile_.threads_per_core;
  if (core >= state_->policies.size()) return;
  State::Policy& p = state_->policies[core];
  p.cur_khz = khz;
  p.cur_freq.write(line(khz));
}

void EmulatedSysfsTree::writeEnergy(uint32_t package, uint64_t energy_uj) {
  if (package >= state_->packages.size()) return;
  state_->packages[package].energy.write(line(energy_uj));
}

void EmulatedSysfsTree::writeCoreTemperature(uint32_t package, uint32_t core_id, double celsius) {
  if (package >= state_->packages.size() || !std::isfinite(celsius)) return;
  auto& files = state_->packages[package].core_temp;
  if (core_id < files.size()) files[core_id].write(milliCelsiusLine(celsius));
}

void EmulatedSysfsTree::writePackageTemperature(uint32_t package, double celsius) {
  if (package >= state_->packages.size() || !std::isfinite(celsius)) return;
  state_->packages[package].package_temp.write(milliCelsiusLine(celsius));
}

std::optional<uint64_t> EmulatedSysfsTree::readPowerLimitUw(uint32_t package) {
  if (package >= state_->packages.size()) return std::nullopt;
  State::Package& pk = state_->packages[package];
  RawFile limit_raw = readRaw(pk.limit_file.path);
  RawFile enabled_raw = readRaw(pk.enabled_file.path);
  // Far above any socket; keeps the arithmetic of the node's cap sane.
  constexpr uint64_t kMaxLimitUw = 100'000'000'000ULL;
  if (pk.limit_file.changed(limit_raw))
    if (auto uw = parseUnsigned(limit_raw.text, kMaxLimitUw)) pk.limit_uw = *uw;
  if (pk.enabled_file.changed(enabled_raw)) {
    // powercap takes what kstrtobool() does; these are the common spellings.
    std::string_view word = trim(enabled_raw.text);
    if (word == "1" || word == "y" || word == "Y" || word == "on") pk.enabled = true;
    else if (word == "0" || word == "n" || word == "N" || word == "off") pk.enabled = false;
  }
  pk.limit_file.settle(limit_raw, line(pk.limit_uw));
  pk.enabled_file.settle(enabled_raw, pk.enabled ? "1\n" : "0\n");
  if (!pk.enabled) return std::nullopt;
  return pk.limit_uw;
}

uint64_t EmulatedSysfsTree::readEnergyUj(uint32_t package) const {
  if (package >= state_->packages.size()) return 0;
  RawFile raw = readRaw(state_->packages[package].energy_path);
  uint64_t value = parseUnsigned(raw.text, UINT64_MAX).value_or(0);
  return value < profile_.rapl_max_energy_range_uj ? value : 0;
}

std::optional<double> EmulatedSysfsTree::readCoreTemperature(uint32_t package, uint32_t core_id) const {
  if (package >= state_->packages.size()) return std::nullopt;
  const auto& paths = state_->packages[package].core_temp_paths;
  if (core_id >= paths.size()) return std::nullopt;
  return parseMilliCelsius(readRaw(paths[core_id]).text);
}

}  // namespace nk
