#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/result.h"
#include "emulated_sysfs_tree.h"
#include "node_profile.h"

namespace nk {

class EmulatedGovernor;
class PhysicsModel;
class HostCpuLoad;

// The emulated node: the sysfs tree plus a physics thread that reads the
// controls, runs the model and writes what a kernel would (current frequency,
// RAPL energy, coretemp). Utilisation of emulated core i comes from the real
// load of host CPU (i mod host CPUs) plus any extra load reported for it.
class EmulatedNode {
 public:
  struct Options {
    std::filesystem::path state_dir;  // the tree goes to <state_dir>/sysfs
    // How often sysfs outputs change. 20 Hz keeps the thread near 0.5% of a
    // core; the model itself sub-steps, so accuracy does not depend on it.
    // The RAPL counters move more often (kEnergyIntervalS).
    double update_interval_s = 0.05;
    // If set, every update also writes what the model computed there (energy
    // per package in J next to the raw energy_uj written in the same update),
    // so that a test outside the process can check RAPL readers against the
    // model exactly.
    std::filesystem::path model_file;
    // Leave the host's own load out: only the app threads the energy
    // manager reports drive the cores, so that what other processes on the
    // host do never shows as the emulated node's power (budget tests
    // measure the app alone).
    bool ignore_host_load = false;
  };

  static Result<std::unique_ptr<EmulatedNode>> start(NodeProfile profile, Options options);
  ~EmulatedNode();  // stops the thread

  // The sysfs root to hand to SysfsCpuFreq and friends.
  std::filesystem::path sysfsRoot() const;
  const NodeProfile& profile() const { return profile_; }
  // Host CPU that emulated core `core` maps onto.
  uint32_t hostCpuOf(uint32_t core) const;

  // Extra utilisation for a core (the energy manager reports the CPU time of
  // app threads placed on it); added to the host CPU's load, capped at 1.
  void setExtraUtilisation(uint32_t core, double utilisation);
  // While the energy manager places app threads on emulated cores, the host
  // CPUs' real load says nothing about which emulated core is busy (2 host
  // CPUs carry all 12 emulated ones), so it turns host load off and the
  // extra utilisation alone drives the model.
  void setHostLoadEnabled(bool enabled);

  // The node's power with `busy_cores` cores fully busy and the rest idle,
  // every core at the lowest clock, by the profile's model at the ambient
  // temperature: the least an app on that many cores can draw (leakage
  // only grows as the node warms, so it is a lower bound).
  double powerAtLowestClockW(uint32_t busy_cores) const;

  // What the model computed at its last update, for tests and the
  // validation against the simulator.
  struct ModelSnapshot {
    uint64_t update_seq = 0;  // full updates (every output)
    uint64_t energy_seq = 0;  // RAPL counter writes: at each update and several between
    double elapsed_s = 0;
    std::vector<double> package_energy_j;
    std::vector<double> package_power_w;
    std::vector<double> core_temperature_c;
    std::vector<uint64_t> core_frequency_khz;
    std::vector<double> core_utilisation;
  };
  ModelSnapshot modelSnapshot() const;

 private:
  EmulatedNode(NodeProfile profile, Options options);
  void run();
  // One update: inputs, model step of dt_s, outputs.
  void iterate(double dt_s, bool read_all_controls, bool sample_load);
  // Between updates: the model steps dt_s at the same inputs and only the
  // RAPL counters are written.
  void advanceEnergy(double dt_s);
  // The counters (and the model file) at the model's energy; mutex_ held.
  void writeEnergyLocked();
  // Lowers (or lifts again) a package's frequency ceiling a table step at a
  // time while it is above its RAPL limit or at TjMax.
  void updateCap(uint32_t package);

  NodeProfile profile_;
  Options options_;
  std::unique_ptr<EmulatedSysfsTree> tree_;
  std::unique_ptr<PhysicsModel> model_;
  std::unique_ptr<HostCpuLoad> host_load_;
  std::unique_ptr<EmulatedGovernor> governor_;
  // Owned by the physics thread once it runs.
  uint32_t host_cpus_ = 1;
  std::vector<double> host_utilisation_;
  std::vector<EmulatedPolicyControls> controls_;
  std::vector<std::optional<uint64_t>> power_limit_uw_;
  std::vector<size_t> cap_index_;  // per package, into profile_.frequencies_khz
  std::vector<uint64_t> energy_offset_uj_;
  std::vector<uint64_t> raw_energy_scratch_;
  void writeModelFile();
  int model_fd_ = -1;
  std::vector<double> utilisation_scratch_;
  std::vector<uint64_t> frequency_scratch_;
  mutable std::mutex mutex_;
  std::vector<double> extra_utilisation_;
  bool host_load_enabled_ = true;
  ModelSnapshot snapshot_;
  std::atomic<bool> stop_{false};
  std::condition_variable stop_cv_;  // with mutex_, so that stop never waits out a tick
  std::thread thread_;
};

}  // namespace nk
