#include "platform/thread_priority.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace nk {
namespace {

// Each case runs on a thread of its own, so the test process keeps its nice value.
template <typename Body>
void onNewThread(Body body) {
  std::thread thread(body);
  thread.join();
}

TEST(ThreadPriority, ANiceValueIsTheCallingThreadsAlone) {
  int process_nice = ThreadPriority::callingThreadNice();
  int set_nice = 0, seen_nice = 0;
  onNewThread([&] {
    set_nice = std::min(19, process_nice + 3);
    ASSERT_TRUE(ThreadPriority::setCallingThreadNice(set_nice));
    seen_nice = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  });
  EXPECT_EQ(seen_nice, set_nice);
  EXPECT_EQ(ThreadPriority::callingThreadNice(), process_nice);
}

TEST(ThreadPriority, LatencyBoundThreadsGetTheirNiceValueWherePermittedElseOneRefusalIsLogged) {
  std::vector<std::string> refusals;
  ThreadPriority::setRefusalLog([&](const std::string& message) { refusals.push_back(message); });
  int before = ThreadPriority::callingThreadNice();
  int first = 0, second = 0;
  onNewThread([&] {
    ThreadPriority::raiseLatencyBound("first");
    first = ThreadPriority::callingThreadNice();
  });
  onNewThread([&] {
    ThreadPriority::raiseLatencyBound("second");
    second = ThreadPriority::callingThreadNice();
  });
  ThreadPriority::setRefusalLog(nullptr);
  EXPECT_EQ(ThreadPriority::callingThreadNice(), before);
  if (refusals.empty()) {
    // Root or CAP_SYS_NICE, as the daemon runs.
    EXPECT_EQ(first, std::min(before, ThreadPriority::kLatencyBoundNice));
    EXPECT_EQ(second, first);
  } else {
    // Not permitted: the threads run on as they were, and one line says why.
    EXPECT_EQ(refusals.size(), 1u);
    EXPECT_NE(refusals[0].find("first"), std::string::npos) << refusals[0];
    EXPECT_EQ(first, before);
    EXPECT_EQ(second, before);
  }
}

TEST(ThreadPriority, AThreadWithABetterNiceValueKeepsIt) {
  int kept = 0, wanted = ThreadPriority::kLatencyBoundNice - 2;
  bool permitted = false;
  onNewThread([&] {
    permitted = ThreadPriority::setCallingThreadNice(wanted).ok();
    ThreadPriority::raiseLatencyBound("better");
    kept = ThreadPriority::callingThreadNice();
  });
  if (!permitted) GTEST_SKIP() << "not permitted to lower a nice value here";
  EXPECT_EQ(kept, wanted);
}

}  // namespace
}  // namespace nk
