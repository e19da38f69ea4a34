#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "cli/ui/event_queue.h"

namespace nk::ui {

// /api/jobs/ID/faults for one tab: the job's symptoms (`symptom`) and the
// faults localised for it (`fault`) so far, then as they arrive, from
// WatchSymptoms and WatchFaults with follow, as the user's own calls (the
// daemon shows a user only their own jobs). Closing cancels both calls.
class JobFaultsFeed {
 public:
  JobFaultsFeed(std::string socket_path, std::string job_id);
  ~JobFaultsFeed();
  JobFaultsFeed(const JobFaultsFeed&) = delete;
  JobFaultsFeed& operator=(const JobFaultsFeed&) = delete;

  // Subscribes one reader, then starts both watches.
  uint64_t start();
  EventQueue& queue() { return queue_; }
  void close();

 private:
  struct Calls;

  std::string socket_path_;
  std::string job_id_;
  EventQueue queue_;
  std::unique_ptr<Calls> calls_;
  std::thread symptoms_, faults_;
};

}  // namespace nk::ui
