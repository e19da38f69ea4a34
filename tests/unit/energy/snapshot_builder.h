#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "energy/energy_decision.h"
#include "energy/energy_snapshot.h"

namespace nk::test {

// Shafik et al.'s Xeon E5-2630: 1.2 to 2.6 GHz in 0.1 GHz steps (15 entries).
inline std::vector<uint64_t> xeonTable() {
  std::vector<uint64_t> t;
  for (uint64_t f = 1200000; f <= 2600000; f += 100000)
    t.push_back(f);
  return t;
}

inline EnergySnapshot node(uint32_t cores, bool with_table = true, uint64_t cur_khz = 2600000) {
  EnergySnapshot s;
  for (uint32_t i = 0; i < cores; ++i) {
    CoreReading c;
    c.id = i;
    c.cur_khz = cur_khz;
    c.min_khz = 1200000;
    c.max_khz = 2600000;
    c.cpuinfo_min_khz = 1200000;
    c.cpuinfo_max_khz = 2600000;
    c.temp_c = 50.0;
    c.util = 0.5;
    s.cores.push_back(c);
  }
  if (with_table)
    s.freq_table_khz = xeonTable();
  return s;
}

inline AppSample app(std::string id, double budget_w, uint32_t max_threads, uint32_t threads,
                     double power_w, uint32_t first_core = 0, double workload = 1e8) {
  AppSample a;
  a.id = std::move(id);
  a.budget_w = budget_w;
  a.max_threads = max_threads;
  a.threads = threads;
  a.power_w = power_w;
  for (uint32_t i = 0; i < threads; ++i)
    a.thread_samples.push_back({static_cast<int32_t>(1000 * (first_core + 1) + i),
                                static_cast<int32_t>(first_core + i), workload});
  return a;
}

inline const CoreDecision* coreOf(const EnergyDecision& d, uint32_t core) {
  for (const CoreDecision& c : d.cores)
    if (c.core == core)
      return &c;
  return nullptr;
}

inline const AppDecision* appOf(const EnergyDecision& d, const std::string& id) {
  for (const AppDecision& a : d.apps)
    if (a.id == id)
      return &a;
  return nullptr;
}

inline const ThreadDecision* threadOf(const AppDecision& a, int32_t tid) {
  for (const ThreadDecision& t : a.thread_decisions)
    if (t.tid == tid)
      return &t;
  return nullptr;
}

}  // namespace nk::test
