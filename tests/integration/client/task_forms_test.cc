// The forms in which libnodekeeper ships task events, against the two kinds
// of daemon it may meet, played by a Tasks service in this test: one from
// before the split form (it reads PackedEvents.compact only, takes a split
// part as empty, and names no forms) and one that names the split form in
// its initial metadata, as nodekeeperd does (tasks_test checks that it
// does). Every task the program made must arrive in a form the daemon reads.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "testlib/background_program.h"
#include "testlib/host_load.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "testlib/wait_for.h"
#include "wire/compact_events.h"

namespace nk::test {
namespace {

namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;
using wire::CompactEvents;
using wire::TaskEventRecord;
using wire::TaskEventType;

std::span<const std::byte> bytesOf(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// Tasks.Publish as a daemon serves it: a daemon from before the split form
// sends no initial metadata and reads only `compact`; a current one names
// the forms it reads and reads both.
class PublishingDaemon final : public v1::TasksService::Service {
 public:
  explicit PublishingDaemon(bool names_split) : names_split_(names_split) {}

  grpc::Status Publish(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<v1::TaskControl, v1::TaskEventBatch>* stream) override {
    if (names_split_) {
      context->AddInitialMetadata(std::string(CompactEvents::kFormsMetadataKey), std::string(CompactEvents::kFormsRead));
      stream->SendInitialMetadata();
    }
    v1::TaskEventBatch batch;
    std::vector<TaskEventRecord> scratch;  // a part's records, counted and dropped
    while (stream->Read(&batch)) {
      std::lock_guard lock(mutex_);
      for (const v1::PackedEvents& part : batch.packed()) {
        std::string fault;
        if (!part.compact().empty()) {
          ++interleaved_parts_;
          fault = CompactEvents::decode(bytesOf(part.compact()), scratch, CompactEvents::kMaxRecordsPerPart);
        }
        if (!part.compact_headers().empty() || !part.compact_values().empty()) {
          ++split_parts_;
          if (names_split_ && fault.empty())
            fault = CompactEvents::decode(CompactEvents::Split::of(part.compact_headers(), part.compact_values()),
                                          scratch, CompactEvents::kMaxRecordsPerPart);
        }
        if (!fault.empty()) faults_.push_back(fault);
        for (const TaskEventRecord& r : scratch) created_ += r.type == TaskEventType::kCreated;
        scratch.clear();
      }
    }
    std::lock_guard lock(mutex_);
    ++streams_ended_;
    ended_.notify_all();
    return grpc::Status::OK;
  }

  // After the program's stream has ended (bounded, so a test never hangs).
  void waitForTheStreamToEnd() {
    std::unique_lock lock(mutex_);
    ended_.wait_for(lock, 60s, [&] { return streams_ended_ > 0; });
  }
  uint64_t splitParts() {
    std::lock_guard lock(mutex_);
    return split_parts_;
  }
  uint64_t parts() {
    std::lock_guard lock(mutex_);
    return split_parts_ + interleaved_parts_;
  }
  uint64_t created() {
    std::lock_guard lock(mutex_);
    return created_;
  }

  const bool names_split_;
  std::mutex mutex_;
  std::condition_variable ended_;
  int streams_ended_ = 0;
  uint64_t split_parts_ = 0;
  uint64_t interleaved_parts_ = 0;
  uint64_t created_ = 0;  // created records that arrived
  std::vector<std::string> faults_;
};

uint64_t tasksMade(const std::string& out) {
  const size_t at = out.find("tasks=");
  return at == std::string::npos ? 0 : std::stoull(out.substr(at + 6));
}

// Serves `daemon` on a socket in `dir` and runs fib(16)'s task tree again
// and again against it, until `enough` holds for what has arrived (then at
// least once more: the stop file is read between rounds). Holds the tasks
// that arrived to the program's own count.
void runAgainst(PublishingDaemon& daemon, const TempDir& dir, const std::function<bool()>& enough) {
  // The metadata may come late on a busy node: NK_TEST_HOST_LOAD makes one.
  const std::shared_ptr<HostLoad> load = HostLoad::fromEnvironment();
  const std::string socket = (dir.path() / "daemon.sock").string();
  const std::filesystem::path stop = dir.path() / "stop";
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&daemon);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server);
  BackgroundProgram program;
  ASSERT_TRUE(program.start({"/usr/bin/env", "OMP_NUM_THREADS=2", "NODEKEEPER_SOCKET=" + socket,
                             "NODEKEEPER_TASKS=lossless", "OMP_TOOL_LIBRARIES=" + envOr("NK_CLIENT_LIB"),
                             envOr("NK_TASKS_PROGRAM"), "until", stop.string(), "16"},
                            dir.path() / "program.out", dir.path() / "program.err"));
  // Bounded only so that a broken library fails instead of hanging.
  (void)waitFor(enough, 60s);
  std::ofstream{stop};
  ASSERT_EQ(program.wait(120s), 0) << program.out() << program.err();
  const uint64_t made = tasksMade(program.out());
  ASSERT_GT(made, 0u) << program.out();
  daemon.waitForTheStreamToEnd();
  server->Shutdown(std::chrono::system_clock::now() + 1s);
  EXPECT_EQ(daemon.faults_, std::vector<std::string>{});
  EXPECT_EQ(daemon.created(), made);
  std::printf("%llu tasks made, %llu arrived: %llu interleaved parts, %llu split\n",
              static_cast<unsigned long long>(made), static_cast<unsigned long long>(daemon.created()),
              static_cast<unsigned long long>(daemon.interleaved_parts_),
              static_cast<unsigned long long>(daemon.split_parts_));
}

TEST(TaskForms, ADaemonThatNamesNoFormsGetsEveryTaskInTheInterleavedForm) {
  TempDir dir{"task-forms", TempDir::Access::kShared};
  PublishingDaemon old_daemon(/*names_split=*/false);
  runAgainst(old_daemon, dir, [&] { return old_daemon.parts() >= 20; });
  EXPECT_EQ(old_daemon.split_parts_, 0u) << "parts this daemon takes as empty";
  EXPECT_GE(old_daemon.interleaved_parts_, 20u);
}

// Parts sent before the daemon's metadata came may be interleaved; once it
// has come, they go split.
TEST(TaskForms, ADaemonThatNamesTheSplitFormGetsItOnceItHasSaidSo) {
  TempDir dir{"task-forms", TempDir::Access::kShared};
  PublishingDaemon daemon(/*names_split=*/true);
  runAgainst(daemon, dir, [&] { return daemon.splitParts() >= 20; });
  EXPECT_GE(daemon.split_parts_, 20u);
}

}  // namespace
}  // namespace nk::test
