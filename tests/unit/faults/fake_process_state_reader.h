#pragma once

#include <map>

#include "faults/process_state_reader.h"

namespace nk::test {

// Processes the test says exist, in the state it sets.
class FakeProcessStateReader final : public ProcessStateReader {
 public:
  void set(pid_t pid, ProcessState state, uint64_t start_time = 1000) { processes_[pid] = {state, start_time}; }
  void remove(pid_t pid) { processes_.erase(pid); }
  void setParent(pid_t pid, pid_t parent) { processes_[pid].ppid = parent; }

  std::optional<ProcessStatus> read(pid_t pid) const override {
    auto it = processes_.find(pid);
    if (it == processes_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<pid_t, ProcessStatus> processes_;
};

}  // namespace nk::test
