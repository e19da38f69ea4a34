// Integration tests: the attacks of a hostile local user (uid 65534) on a
// root nodekeeperd, replayed against the real daemon and CLI, each refused
// with one clear line and nothing overwritten, applied or deleted.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "nodekeeper/v1/faults.grpc.pb.h"
#include "taskgraph/recording_writer.h"
#include "base/clock.h"
#include "testlib/daemon_process.h"
#include "testlib/files.h"
#include "testlib/run_program.h"
#include "testlib/temp_dir.h"
#include "testlib/test_env.h"
#include "wire/message_log.h"

namespace nk::test {
namespace {

namespace fs = std::filesystem;
namespace v1 = nodekeeper::v1;
using namespace std::chrono_literals;

constexpr uid_t kNobody = 65534;

// What a hostile user plants: a 1 mW cap on package 0, which the daemon
// would write at its next start as an "original" left by a crash.
constexpr char kPlantedControls[] =
    R"({"controls": [{"key": "rapl:0:constraint_0_power_limit_uw", "original": "1000"}]})";

// Runs a shell command as the hostile user; the test fails if it does not
// succeed (the attack must at least be possible to try).
void asNobody(const std::string& command) {
  ProcessResult r = runProgram({"/bin/sh", "-c", command}, kNobody);
  ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
}

void makeDir(const fs::path& path, fs::perms perms) {
  fs::create_directory(path);
  fs::permissions(path, perms);
}

size_t lineCount(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

class HostileUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "replays another user's attacks: needs root";
  }

  // The daemon's output when it refused to start (its stderr only).
  static std::string refusal(const DaemonProcess& daemon) { return readFile(daemon.stderrPath()); }

  TempDir dir_{"hostile", TempDir::Access::kShared};
};

// A state directory anyone can write (the README's old /tmp examples): a
// planted saved-controls.json would have been applied as root.
TEST_F(HostileUserTest, ControlsPlantedInAStateDirectoryOthersCanWriteAreNotApplied) {
  const fs::path state = dir_ / "state";
  makeDir(state, fs::perms::all);
  asNobody("printf '%s' '" + std::string(kPlantedControls) + "' > " + (state / "saved-controls.json").string());

  DaemonProcess daemon;
  ASSERT_FALSE(daemon.start(state)) << "started in a directory others can write";
  const std::string said = refusal(daemon);
  EXPECT_NE(said.find("untrusted state directory: " + state.string() + " is writable by other users (mode 0777)"),
            std::string::npos)
      << said;
  EXPECT_EQ(lineCount(said), 1u) << said;
  // Nothing applied: no emulated node was even built, the planted file is as it was.
  EXPECT_FALSE(fs::exists(state / "sysfs"));
  EXPECT_EQ(readFile(state / "saved-controls.json"), kPlantedControls);
}

// A fixed /tmp name the attacker made first, as their own directory.
TEST_F(HostileUserTest, AStateDirectoryAnotherUserOwnsIsRefused) {
  // Made by the attacker as their own, as they could under /tmp (here in
  // root's test directory, so root makes it and gives it away).
  const fs::path state = dir_ / "theirs";
  makeDir(state, fs::perms(0755));
  ASSERT_EQ(::chown(state.c_str(), kNobody, kNobody), 0);
  asNobody("printf '%s' '" + std::string(kPlantedControls) + "' > " + (state / "saved-controls.json").string());

  DaemonProcess daemon;
  ASSERT_FALSE(daemon.start(state));
  const std::string said = refusal(daemon);
  EXPECT_NE(said.find("untrusted state directory: " + state.string() + " is owned by uid 65534"), std::string::npos)
      << said;
  EXPECT_FALSE(fs::exists(state / "sysfs"));
  EXPECT_EQ(readFile(state / "saved-controls.json"), kPlantedControls);
}

// A symlink planted at the saved controls' temporary name, pointing at a
// root-owned 0600 file: not followed, the file keeps its contents.
TEST_F(HostileUserTest, ALinkAtTheTemporaryFileIsNotFollowed) {
  const fs::path victim = dir_ / "root-only";
  { std::ofstream(victim) << "root's secret\n"; }
  fs::permissions(victim, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path state = dir_ / "state";
  makeDir(state, fs::perms::all);
  asNobody("ln -s " + victim.string() + " " + (state / "saved-controls.json.tmp").string());

  DaemonProcess daemon;
  ASSERT_FALSE(daemon.start(state));
  EXPECT_NE(refusal(daemon).find("writable by other users"), std::string::npos) << refusal(daemon);
  EXPECT_EQ(readFile(victim), "root's secret\n");

  // Left over in a directory of root's (from before it was made private):
  // the daemon starts, a control change writes the saved controls anew, and
  // the link is replaced, never written through.
  fs::permissions(state, fs::perms(0755));
  ASSERT_TRUE(daemon.start(state)) << daemon.lastError();
  ProcessResult cap = runProgram({cliPath(), "--socket", daemon.socket().string(), "power", "cap", "set", "40W"});
  ASSERT_EQ(cap.exit_code, 0) << cap.err;
  EXPECT_EQ(readFile(victim), "root's secret\n");
  EXPECT_FALSE(fs::is_symlink(state / "saved-controls.json"));
  EXPECT_NE(readFile(state / "saved-controls.json").find("constraint_0_power_limit_uw"), std::string::npos);
  EXPECT_EQ(daemon.stop(), 0);
}

// --socket PATH replaces only a stale socket; whatever else is there stays.
class SocketPathTest : public HostileUserTest {
 protected:
  // Runs a daemon that serves on `socket`; it must give up, with `expected`.
  void expectRefused(const fs::path& socket, const std::string& expected) {
    const fs::path state = dir_ / ("state-" + std::to_string(++runs_));
    ProcessResult r = runProgram({daemonPath(), "--emulate", "--state-dir", state.string(), "--socket",
                                  socket.string(), "--config", "/dev/null"},
                                 std::nullopt, 120s);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(lineCount(r.err), 1u) << r.err;
    // Refused before anything was started: no emulated node was built.
    EXPECT_FALSE(fs::exists(state / "sysfs"));
  }
  int runs_ = 0;
};

TEST_F(SocketPathTest, ARegularFileIsNotReplaced) {
  const fs::path file = dir_ / "notes.txt";
  { std::ofstream(file) << "someone's notes\n"; }
  ASSERT_EQ(::chown(file.c_str(), kNobody, kNobody), 0);
  expectRefused(file, file.string() + " is a regular file, not a stale socket; refusing to replace it");
  EXPECT_EQ(readFile(file), "someone's notes\n");
}

TEST_F(SocketPathTest, ADirectoryIsNotReplaced) {
  const fs::path empty = dir_ / "empty";
  makeDir(empty, fs::perms(0755));
  expectRefused(empty, empty.string() + " is a directory, not a stale socket");
  EXPECT_TRUE(fs::is_directory(empty));
}

TEST_F(SocketPathTest, ASymlinkIsNotReplacedNorFollowed) {
  const fs::path target = dir_ / "target";
  { std::ofstream(target) << "kept\n"; }
  const fs::path link = dir_ / "link.sock";
  fs::create_symlink(target, link);
  expectRefused(link, link.string() + " is a symlink, not a stale socket");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(readFile(target), "kept\n");
}

TEST_F(SocketPathTest, ALiveSocketIsNotTakenOver) {
  DaemonProcess first;
  ASSERT_TRUE(first.start(dir_ / "first")) << first.lastError();
  expectRefused(first.socket(), "another process is already serving " + first.socket().string());
  ProcessResult status = runProgram({cliPath(), "--socket", first.socket().string(), "status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
}

// On the way out the daemon removes its own socket, not whatever file was
// put at the path while it ran.
TEST_F(SocketPathTest, OnStopOnlyItsOwnSocketIsRemoved) {
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir_ / "own")) << daemon.lastError();
  const fs::path socket = daemon.socket();
  ASSERT_EQ(::unlink(socket.c_str()), 0);
  { std::ofstream(socket) << "put here later\n"; }
  EXPECT_EQ(daemon.stop(), 0);
  EXPECT_EQ(readFile(socket), "put here later\n");

  DaemonProcess again;
  ASSERT_TRUE(again.start(dir_ / "again")) << again.lastError();
  EXPECT_EQ(again.stop(), 0);
  EXPECT_FALSE(fs::exists(again.socket())) << "its own socket is still removed";
}

TEST_F(SocketPathTest, ASocketDirectoryOthersCanWriteIsRefused) {
  const fs::path open = dir_ / "open";
  makeDir(open, fs::perms::all);
  expectRefused(open / "nk.sock", "untrusted socket directory: " + open.string() + " is writable by other users");
  EXPECT_FALSE(fs::exists(open / "nk.sock"));
}

// A message log another user leaves at a rank's path in /dev/shm would put
// pending messages (a hang, a failed send) into the job's fault analysis.
TEST_F(HostileUserTest, AMessageLogPlantedByAnotherUserIsIgnored) {
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir_ / "state")) << daemon.lastError();
  auto channel = grpc::CreateChannel("unix:" + daemon.socket().string(), grpc::InsecureChannelCredentials());
  auto faults = v1::FaultsService::NewStub(channel);
  auto tree = v1::FaultTreeService::NewStub(channel);

  // This process is the job's one rank (root's).
  const std::string job = "hostile-" + std::to_string(::getpid());
  {
    v1::RegisterRankRequest request;
    request.set_job_id(job);
    request.set_rank(0);
    request.set_size(1);
    request.set_node("n1");
    request.set_pid(::getpid());
    request.set_endpoint("unix:" + daemon.socket().string());
    v1::RegisterRankResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    grpc::Status s = faults->RegisterRank(&context, request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // A log with one failed send, as an agent lays it out.
  const uint32_t capacity = 8;
  std::vector<uint64_t> words((wire::MessageLog::regionSize(capacity) + 7) / 8);
  auto region = std::as_writable_bytes(std::span(words));
  wire::MessageLog log(region, capacity);
  const int64_t now_ns = wallClockNs();
  log.append("MPI_Send", 1, 0, 64, now_ns - 3'000'000'000, now_ns - 1'000'000'000, 1);
  const fs::path prepared = dir_ / "prepared.log";
  {
    std::ofstream out(prepared, std::ios::binary);
    out.write(reinterpret_cast<const char*>(region.data()), static_cast<std::streamsize>(region.size()));
  }
  fs::permissions(prepared, fs::perms(0644));
  const fs::path shm_log = "/dev/shm/nodekeeper-pmpi-" + std::to_string(::getpid()) + ".log";
  fs::remove(shm_log);

  auto probe = [&] {
    v1::LogProbeRequest request;
    request.set_job_id(job);
    v1::LogProbeResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    grpc::Status s = tree->LogProbe(&context, request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response;
  };

  asNobody("cp " + prepared.string() + " " + shm_log.string());
  v1::LogProbeResponse planted = probe();
  EXPECT_EQ(planted.pending(), 0u);
  EXPECT_EQ(planted.entries_size(), 0);

  // The same log, the job's own user's: read (the probe can see a log).
  fs::remove(shm_log);
  fs::copy_file(prepared, shm_log);
  v1::LogProbeResponse own = probe();
  EXPECT_EQ(own.pending(), 1u);
  EXPECT_EQ(own.entries_size(), 1);
  fs::remove(shm_log);
  EXPECT_EQ(daemon.stop(), 0);
}

// Bad inputs from an admin: each refused with one line, nothing changed.
TEST_F(HostileUserTest, APowerCapAboveThePackagesMaximumIsRefused) {
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir_ / "state")) << daemon.lastError();
  const fs::path zone = daemon.sysfs() / "devices/virtual/powercap/intel-rapl/intel-rapl:0";
  const std::string max_uw = readTrimmed(zone / "constraint_0_max_power_uw");
  const std::string limit_before = readTrimmed(zone / "constraint_0_power_limit_uw");
  const std::string enabled_before = readTrimmed(zone / "enabled");
  ASSERT_LT(std::stoull(max_uw), 200000000u);

  ProcessResult r = runProgram({cliPath(), "--socket", daemon.socket().string(), "power", "cap", "set", "200W"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("power cap 200.0 W is above package 0's maximum of"), std::string::npos) << r.err;
  EXPECT_EQ(lineCount(r.err), 1u) << r.err;
  EXPECT_EQ(readTrimmed(zone / "constraint_0_power_limit_uw"), limit_before);
  EXPECT_EQ(readTrimmed(zone / "enabled"), enabled_before);
  EXPECT_FALSE(fs::exists(daemon.stateDir() / "saved-controls.json"));
  EXPECT_EQ(daemon.stop(), 0);
}

TEST_F(HostileUserTest, AFrequencyWithoutAUnitIsRefusedWithAHint) {
  DaemonProcess daemon;
  ASSERT_TRUE(daemon.start(dir_ / "state")) << daemon.lastError();
  const fs::path max = daemon.sysfs() / "devices/system/cpu/cpufreq/policy0/scaling_max_freq";
  const std::string before = readTrimmed(max);
  ProcessResult r = runProgram({cliPath(), "--socket", daemon.socket().string(), "freq", "set", "--max", "2000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--max: '2000' has no unit; write GHz, MHz or kHz"), std::string::npos) << r.err;
  EXPECT_EQ(lineCount(r.err), 1u) << r.err;
  EXPECT_EQ(readTrimmed(max), before);
  EXPECT_EQ(daemon.stop(), 0);
}

TEST_F(HostileUserTest, ADirectoryAsTheConfigAndAnUnknownAdminGroupAreRefused) {
  ProcessResult dir_config = runProgram({daemonPath(), "--config", dir_.path().string()});
  EXPECT_EQ(dir_config.exit_code, 1);
  EXPECT_EQ(dir_config.err, "nodekeeperd: " + dir_.path().string() +
                                " is a directory, not a config file (give the .toml file itself)\n");
  ProcessResult group = runProgram({daemonPath(), "--config", "/dev/null", "--admin-group", "no-such-group-nk"});
  EXPECT_EQ(group.exit_code, 1);
  EXPECT_EQ(group.err, "nodekeeperd: --admin-group 'no-such-group-nk' is no group on this host (see getent group)\n");
}

// `export --out PATH` in a directory others can write: a link planted at
// PATH must not make the export overwrite the file it points to.
TEST_F(HostileUserTest, ExportDoesNotWriteThroughAPlantedSymlink) {
  const fs::path recording = dir_ / "session.nkrec";
  {
    auto writer = RecordingWriter::create(recording);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    ASSERT_TRUE(writer->flush().ok());
  }
  const fs::path victim = dir_ / "root-only";
  { std::ofstream(victim) << "root's secret\n"; }
  fs::permissions(victim, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path drop = dir_ / "drop";
  makeDir(drop, fs::perms::all);  // not sticky: the kernel's protected_symlinks does not apply

  // The export itself works (the test can tell a refusal from a failure).
  ProcessResult plain = runProgram({cliPath(), "export", recording.string(), "--format", "dot", "--out",
                                    (drop / "plain.dot").string()});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;

  const fs::path out = drop / "trace.json";
  asNobody("ln -s " + victim.string() + " " + out.string());
  ProcessResult r =
      runProgram({cliPath(), "export", recording.string(), "--format", "perfetto", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "nodekeeper: export: " + out.string() +
                       " is a symlink; refusing to write through it (remove the link or choose another --out)\n");
  EXPECT_EQ(readFile(victim), "root's secret\n");
  EXPECT_TRUE(fs::is_symlink(out));

  // An OTF2 archive's directory likewise.
  const fs::path archive = drop / "archive";
  asNobody("ln -s " + dir_.path().string() + " " + archive.string());
  ProcessResult otf2 =
      runProgram({cliPath(), "export", recording.string(), "--format", "otf2", "--out", archive.string()});
  EXPECT_EQ(otf2.exit_code, 1);
  EXPECT_NE(otf2.err.find(archive.string() + " is a symlink"), std::string::npos) << otf2.err;
  EXPECT_FALSE(fs::exists(dir_ / "traces.otf2"));
}

}  // namespace
}  // namespace nk::test
