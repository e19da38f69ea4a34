// Recording quotas end to end: a real daemon with a small per-user quota,
// and OpenMP task programs run as an unprivileged user (uid 65534) that
// record more than it. The recordings directory never grows past the
// quota, the programs run on unharmed, their sessions say the recording
// stopped, and nothing else in the state directory is touched.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "nodekeeper/v1/tasks.grpc.pb.h"
#include "testlib/daemon_fixture.h"
#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"

namespace v1 = nodekeeper::v1;
namespace fs = std::filesystem;

namespace nk::test {
namespace {

constexpr uid_t kNobody = 65534;
constexpr uint64_t kQuota = 2 << 20;  // --recording-quota-per-user 2MiB
// fib 25 under the lossless tool records about 5 MiB, compressed (measured:
// see the check below that a run does go over the quota).
constexpr int kFib = 28;
constexpr long kFibValue = 317811;

// Bytes of the regular files directly in `dir`, as du would add their
// sizes; files that vanish while being counted are skipped.
uint64_t directoryBytes(const fs::path& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    uint64_t size = it->file_size(size_ec);
    if (!size_ec) bytes += size;
  }
  return bytes;
}

// What a file is: its bytes and last change, to tell that nothing wrote it.
struct FileState {
  std::string bytes;
  timespec mtime{};
  bool operator==(const FileState& other) const {
    return bytes == other.bytes && mtime.tv_sec == other.mtime.tv_sec && mtime.tv_nsec == other.mtime.tv_nsec;
  }
};

FileState stateOf(const fs::path& path) {
  struct stat st{};
  FileState state;
  if (::lstat(path.c_str(), &st) == 0) state.mtime = st.st_mtim;
  state.bytes = readFile(path);
  return state;
}

class RecordingQuotaTest : public DaemonFixture {
 protected:
  RecordingQuotaTest()
      : DaemonFixture("quota", {"--recording-quota-per-user", "2MiB", "--recording-quota-total", "64MiB"}) {}

  void SetUp() override {
    DaemonFixture::SetUp();
    if (HasFatalFailure()) return;
    tasks_ = v1::TasksService::NewStub(channel_);
    // The build tree may be closed to other users: they run copies.
    for (const std::string& built : {envOr("NK_TASKS_PROGRAM"), envOr("NK_CLIENT_LIB")}) {
      fs::path copy = programs_ / fs::path(built).filename();
      fs::copy_file(built, copy);
      fs::permissions(copy, fs::perms(0755));
    }
  }

  ProcessResult runAsNobody(int n) {
    return runProgram({"/usr/bin/env", "NODEKEEPER_SOCKET=" + daemon_.socket().string(),
                       "OMP_TOOL_LIBRARIES=" + (programs_ / fs::path(envOr("NK_CLIENT_LIB")).filename()).string(),
                       "NODEKEEPER_TASKS=lossless", "OMP_NUM_THREADS=2",
                       (programs_ / fs::path(envOr("NK_TASKS_PROGRAM")).filename()).string(), "fib",
                       std::to_string(n)},
                      kNobody, std::chrono::seconds(240));
  }

  std::vector<v1::Session> sessions() {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SessionList list;
    EXPECT_TRUE(tasks_->ListSessions(&context, v1::ListSessionsRequest(), &list).ok());
    return {list.sessions().begin(), list.sessions().end()};
  }

  // Every file of the state directory but the recordings, and what the
  // emulated node and the test rewrite all the time (its sysfs tree, its
  // model file, the daemon's log).
  std::map<fs::path, FileState> stateFiles() {
    std::map<fs::path, FileState> files;
    for (auto it = fs::recursive_directory_iterator(daemon_.stateDir()); it != fs::recursive_directory_iterator();
         ++it) {
      const fs::path relative = fs::relative(it->path(), daemon_.stateDir());
      const std::string top = relative.begin()->string();
      if (top == "sysfs") {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_directory() || it->is_socket()) continue;
      if (top == "recordings" && relative.filename() != "notes.txt") continue;
      if (top == "emulator-model.txt" || it->path() == daemon_.stderrPath()) continue;
      files[relative] = stateOf(it->path());
    }
    return files;
  }

  TempDir programs_{"quota-programs", TempDir::Access::kShared};
  std::unique_ptr<v1::TasksService::Stub> tasks_;
};

TEST_F(RecordingQuotaTest, AUsersProgramsCannotGrowTheRecordingsPastTheQuota) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run programs as uid " << kNobody;
  // Saved controls to protect: the first write saves the originals.
  ProcessResult cap = runProgram({cliPath(), "--socket", daemon_.socket().string(), "power", "cap", "set", "40W"});
  ASSERT_EQ(cap.exit_code, 0) << cap.err;
  const fs::path saved = daemon_.stateDir() / "saved-controls.json";
  ASSERT_TRUE(fs::exists(saved));
  // Something else in the recordings directory, not a recording.
  fs::create_directories(daemon_.stateDir() / "recordings");
  fs::path notes = daemon_.stateDir() / "recordings" / "notes.txt";
  std::ofstream(notes) << "not a recording\n";
  const auto before = stateFiles();
  ASSERT_TRUE(before.contains("saved-controls.json"));
  ASSERT_TRUE(before.contains("recordings/notes.txt"));
  const uint64_t planted = directoryBytes(daemon_.stateDir() / "recordings");

  std::atomic<bool> measuring = true;
  std::atomic<uint64_t> most = 0;
  std::thread measure([&] {
    while (measuring) {
      uint64_t now = directoryBytes(daemon_.stateDir() / "recordings") - planted;
      most = std::max<uint64_t>(most, now);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  constexpr int kRuns = 3;
  std::vector<ProcessResult> runs;
  for (int run = 0; run < kRuns; ++run) runs.push_back(runAsNobody(kFib));
  measuring = false;
  measure.join();
  most = std::max<uint64_t>(most, directoryBytes(daemon_.stateDir() / "recordings") - planted);

  // Every program ran to its end with its whole output.
  std::vector<long> tasks_created;
  for (const ProcessResult& run : runs) {
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(run.out, m, std::regex("fib=(\\d+) tasks=(\\d+)"))) << run.out;
    EXPECT_EQ(std::stol(m[1]), kFibValue);
    tasks_created.push_back(std::stol(m[2]));
  }
  std::printf("recordings of uid %u peaked at %llu bytes (quota %llu)\n", kNobody,
              static_cast<unsigned long long>(most.load()), static_cast<unsigned long long>(kQuota));
  EXPECT_LE(most.load(), kQuota) << "the recordings grew to " << most.load() << " bytes";
  // A batch that would not fit is not recorded, and batches grow large
  // on a busy host: the peak falls short of the quota by up to one batch.
  EXPECT_GT(most.load(), kQuota / 2) << "the programs recorded too little to test the quota";

  auto list = sessions();
  ASSERT_EQ(list.size(), static_cast<size_t>(kRuns));
  for (int run = 0; run < kRuns; ++run) {
    const v1::Session& s = list[run];
    EXPECT_EQ(s.uid(), kNobody);
    EXPECT_FALSE(s.live());
    // The graph took every task though the recording stopped.
    EXPECT_EQ(static_cast<long>(s.tasks()), tasks_created[run]) << run;
  }
  // The last one stopped at the quota; the earlier ones stopped too, and
  // were then removed to make room for the next.
  EXPECT_EQ(list.back().recording_stopped(), "stopped: uid 65534's live recordings reached their quota of 2 MiB");
  EXPECT_TRUE(fs::exists(list.back().recording()));
  for (int run = 0; run + 1 < kRuns; ++run) {
    EXPECT_EQ(list[run].recording_stopped(), "removed: uid 65534's recordings over their quota of 2 MiB") << run;
    EXPECT_EQ(list[run].recording(), "") << run;
  }
  ProcessResult shown = runProgram({cliPath(), "--socket", daemon_.socket().string(), "tasks"});
  EXPECT_NE(shown.out.find("session " + std::to_string(list.back().session_id()) +
                           ": recording stopped: uid 65534's live recordings reached their quota of 2 MiB"),
            std::string::npos)
      << shown.out << shown.err;
  // Said once per session in the log.
  std::string log = readFile(daemon_.stderrPath());
  size_t said = 0;
  for (size_t at = log.find("stopped recording"); at != std::string::npos; at = log.find("stopped recording", at + 1))
    ++said;
  EXPECT_EQ(said, static_cast<size_t>(kRuns)) << log;

  // Nothing else in the state directory was written, removed or added.
  const auto after = stateFiles();
  EXPECT_EQ(after.size(), before.size());
  for (const auto& [path, state] : before) {
    auto it = after.find(path);
    ASSERT_NE(it, after.end()) << path << " is gone";
    EXPECT_TRUE(it->second == state) << path << " changed";
  }
}

}  // namespace
}  // namespace nk::test
