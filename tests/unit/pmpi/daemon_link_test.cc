// DaemonLink without a daemon: the job runs on, and the link's thread must
// cost it nothing while it waits to try again (it once spun on a heartbeat
// time long past, and made an FT-shaped run three to seven times slower).
#include "daemon_link.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <thread>

namespace nk::pmpi {
namespace {

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

TEST(DaemonLinkTest, WithoutADaemonTheLinkWaitsInsteadOfSpinning) {
  int progress_calls = 0;
  DaemonLink link("/nonexistent/nodekeeperd.sock", std::chrono::milliseconds(10), [&] {
    ++progress_calls;
    return ProgressSnapshot{};
  });
  link.start(RankRegistration{"job", 0, 1, "node", "unix:/nonexistent", 1}, {}, false);
  SymptomReport symptom;
  symptom.operation = "MPI_Recv";
  link.report(symptom);  // queued for a daemon that never comes: no busy loop either
  double before = processCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  double used = processCpuSeconds() - before;
  link.stop(std::chrono::milliseconds(100));
  // A spinning thread would use the whole 0.6 s of a core.
  EXPECT_LT(used, 0.15) << "the link's thread used " << used << " s of CPU in 0.6 s";
  EXPECT_EQ(progress_calls, 0);  // no heartbeats without a registration
}

// A rank ending by a signal asks for a report out of turn; with no daemon
// the answer is "not sent" at once (the handler then goes on), not after
// the deadline.
TEST(DaemonLinkTest, AnOutOfTurnReportWithoutADaemonIsNotSent) {
  DaemonLink link("/nonexistent/nodekeeperd.sock", std::chrono::milliseconds(100000), [] { return ProgressSnapshot{}; });
  EXPECT_FALSE(link.reportProgressNow(std::chrono::milliseconds(100)));  // not started: nothing to ask
  link.start(RankRegistration{"job", 0, 1, "node", "unix:/nonexistent", 1}, {}, false);
  EXPECT_FALSE(link.reportProgressNow(std::chrono::seconds(600)));  // would hang the test if it waited
  link.stop(std::chrono::milliseconds(100));
  EXPECT_FALSE(link.reportProgressNow(std::chrono::milliseconds(100)));
}

}  // namespace
}  // namespace nk::pmpi
