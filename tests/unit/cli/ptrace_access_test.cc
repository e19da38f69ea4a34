#include "cli/ptrace_access.h"
#include "testlib/temp_dir.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace nk {
namespace {

namespace fs = std::filesystem;

// A fake procfs: per-process status files and, when given, Yama's scope.
class FakeProc : public ::testing::Test {
 protected:

  void write(const fs::path& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  void scope(const std::string& value) { write("sys/kernel/yama/ptrace_scope", value + "\n"); }
  // uids/gids: "real effective saved fs".
  void process(pid_t pid, const std::string& uids, const std::string& gids = "100\t100\t100\t100",
               pid_t ppid = 1, pid_t tracer = 0, const std::string& state = "S (sleeping)") {
    write(std::to_string(pid) + "/status", "Name:\tapp\nState:\t" + state + "\nPPid:\t" + std::to_string(ppid) +
                                               "\nTracerPid:\t" + std::to_string(tracer) + "\nUid:\t" + uids +
                                               "\nGid:\t" + gids + "\nCapEff:\t0000000000000000\n");
  }
  PtraceDecision check(const PtraceTracer& tracer, pid_t target, bool can_name = false) {
    return PtraceAccess(root_.path()).check(tracer, target, can_name);
  }
  static bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  test::TempDir root_{"ptrace"};
  PtraceTracer user_{1000, 100, false, 4000};
  PtraceTracer root_tracer_{0, 0, true, 4000};
};

TEST_F(FakeProc, NoYamaSameUserIsAllowed) {
  process(300, "1000\t1000\t1000\t1000");
  auto d = check(user_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kAllowed);
  EXPECT_FALSE(d.yama_scope.has_value());
  EXPECT_TRUE(d.explanation.empty());
  EXPECT_TRUE(d.mayAttach());
  EXPECT_TRUE(d.toStatus().ok());
  auto scope = PtraceAccess(root_.path()).yamaScope();
  ASSERT_TRUE(scope.ok());
  EXPECT_FALSE(scope->has_value());
}

TEST_F(FakeProc, NoYamaOtherUserIsRefusedWithBothUids) {
  process(300, "1001\t1001\t1001\t1001");
  auto d = check(user_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_FALSE(d.mayAttach());
  EXPECT_TRUE(has(d.explanation, "uid 1001")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "uid 1000")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "CAP_SYS_PTRACE")) << d.explanation;
  EXPECT_EQ(d.toStatus().error().code, ErrorCode::kPermissionDenied);
}

TEST_F(FakeProc, CapSysPtraceOverridesOtherUser) {
  process(300, "1001\t1001\t1001\t1001", "5\t5\t5\t5");
  EXPECT_EQ(check(root_tracer_, 300).verdict, PtraceVerdict::kAllowed);
  PtraceTracer capable_user{1000, 100, true, 4000};
  EXPECT_EQ(check(capable_user, 300).verdict, PtraceVerdict::kAllowed);
}

TEST_F(FakeProc, RootWithoutCapabilityIsJustAnotherUser) {
  process(300, "1000\t1000\t1000\t1000");
  PtraceTracer uncapable_root{0, std::nullopt, false, 4000};
  EXPECT_EQ(check(uncapable_root, 300).verdict, PtraceVerdict::kRefused);
}

TEST_F(FakeProc, SetuidTargetNeedsCapability) {
  // Real uid is the user's, but a setuid program runs with another
  // effective and saved uid; the kernel wants all three to match.
  process(300, "1000\t0\t0\t0");
  auto d = check(user_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "real 1000, effective 0, saved 0")) << d.explanation;
  EXPECT_EQ(check(root_tracer_, 300).verdict, PtraceVerdict::kAllowed);
}

TEST_F(FakeProc, GidsAreComparedOnlyWhenKnown) {
  process(300, "1000\t1000\t1000\t1000", "100\t200\t200\t200");
  auto d = check(user_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "gid")) << d.explanation;
  PtraceTracer gid_unknown{1000, std::nullopt, false, 4000};
  EXPECT_EQ(check(gid_unknown, 300).verdict, PtraceVerdict::kAllowed);
}

TEST_F(FakeProc, ScopeZeroIsClassic) {
  scope("0");
  process(300, "1000\t1000\t1000\t1000");
  process(301, "1001\t1001\t1001\t1001");
  auto d = check(user_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kAllowed);
  EXPECT_EQ(d.yama_scope, 0);
  EXPECT_EQ(check(user_, 301).verdict, PtraceVerdict::kRefused);
}

TEST_F(FakeProc, ScopeOneAllowsDescendants) {
  scope("1");
  process(200, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 4000);
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 200);
  auto d = check(user_, 300);  // 300 -> 200 -> 4000 (the tracer)
  EXPECT_EQ(d.verdict, PtraceVerdict::kAllowed);
  EXPECT_EQ(d.yama_scope, 1);
}

TEST_F(FakeProc, ScopeOneNonDescendantMustNameTheTracer) {
  scope("1");
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 1);
  auto d = check(user_, 300, /*target_can_name_tracer=*/true);
  EXPECT_EQ(d.verdict, PtraceVerdict::kAllowedIfTargetNamesTracer);
  EXPECT_TRUE(d.mayAttach());
  EXPECT_TRUE(d.toStatus().ok());
  EXPECT_TRUE(has(d.explanation, "PR_SET_PTRACER")) << d.explanation;

  // Without a tracer pid (gdb not forked yet) there is no ancestry to use.
  PtraceTracer no_pid{1000, 100, false, std::nullopt};
  EXPECT_EQ(check(no_pid, 300, true).verdict, PtraceVerdict::kAllowedIfTargetNamesTracer);
}

TEST_F(FakeProc, ScopeOneWithoutArrangementIsRefusedWithRemedies) {
  scope("1");
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 1);
  auto d = check(user_, 300, /*target_can_name_tracer=*/false);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "kernel.yama.ptrace_scope is 1")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "PR_SET_PTRACER")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "sysctl kernel.yama.ptrace_scope=0")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "root")) << d.explanation;
}

TEST_F(FakeProc, ScopeOneLetsCapabilityThrough) {
  scope("1");
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 1);
  EXPECT_EQ(check(root_tracer_, 300).verdict, PtraceVerdict::kAllowed);
}

TEST_F(FakeProc, ScopeOneStillNeedsTheSameUser) {
  scope("1");
  process(300, "1001\t1001\t1001\t1001", "100\t100\t100\t100", 4000);
  auto d = check(user_, 300, true);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "uid 1001")) << d.explanation;
}

TEST_F(FakeProc, ParentLoopDoesNotHang) {
  scope("1");
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 301);
  process(301, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 300);
  EXPECT_EQ(check(user_, 300).verdict, PtraceVerdict::kRefused);
}

TEST_F(FakeProc, ScopeTwoOnlyCapability) {
  scope("2");
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 4000);
  auto d = check(user_, 300, true);  // neither descent nor naming helps
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_EQ(d.yama_scope, 2);
  EXPECT_EQ(d.explanation,
            "kernel.yama.ptrace_scope is 2: only processes with CAP_SYS_PTRACE (root) may attach: run as root or "
            "`sysctl kernel.yama.ptrace_scope=1`");
  EXPECT_EQ(check(root_tracer_, 300).verdict, PtraceVerdict::kAllowed);
}

TEST_F(FakeProc, ScopeThreeRefusesEveryone) {
  scope("3");
  process(300, "0\t0\t0\t0", "0\t0\t0\t0", 4000);
  auto d = check(root_tracer_, 300, true);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_EQ(d.yama_scope, 3);
  EXPECT_TRUE(has(d.explanation, "no process may attach until reboot")) << d.explanation;
}

TEST_F(FakeProc, UnknownScopeIsRefused) {
  scope("-1");
  process(300, "1000\t1000\t1000\t1000");
  auto d = check(user_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "-1")) << d.explanation;
}

TEST_F(FakeProc, UnreadableScopeIsRefusedAndSaysWhy) {
  scope("strict");
  process(300, "1000\t1000\t1000\t1000");
  auto scope_or = PtraceAccess(root_.path()).yamaScope();
  ASSERT_FALSE(scope_or.ok());
  EXPECT_TRUE(has(scope_or.error().message, "strict"));
  auto d = check(root_tracer_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "ptrace_scope")) << d.explanation;
}

TEST_F(FakeProc, ScopeWithoutNewlineParses) {
  write("sys/kernel/yama/ptrace_scope", "2");
  auto scope_or = PtraceAccess(root_.path()).yamaScope();
  ASSERT_TRUE(scope_or.ok());
  EXPECT_EQ(*scope_or, 2);
}

TEST_F(FakeProc, GoneTarget) {
  scope("1");
  auto d = check(root_tracer_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kTargetGone);
  EXPECT_FALSE(d.mayAttach());
  EXPECT_TRUE(has(d.explanation, "300")) << d.explanation;
  EXPECT_EQ(d.toStatus().error().code, ErrorCode::kNotFound);
  EXPECT_EQ(check(root_tracer_, 0).verdict, PtraceVerdict::kTargetGone);
  EXPECT_EQ(check(root_tracer_, -5).verdict, PtraceVerdict::kTargetGone);
}

TEST_F(FakeProc, ZombieTargetIsGone) {
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 1, 0, "Z (zombie)");
  EXPECT_EQ(check(user_, 300).verdict, PtraceVerdict::kTargetGone);
}

TEST_F(FakeProc, AlreadyTracedTargetNamesItsTracer) {
  process(300, "1000\t1000\t1000\t1000", "100\t100\t100\t100", 1, 555);
  write("555/comm", "strace\n");
  auto d = check(root_tracer_, 300);
  EXPECT_EQ(d.verdict, PtraceVerdict::kRefused);
  EXPECT_TRUE(has(d.explanation, "555 (strace)")) << d.explanation;
}

TEST_F(FakeProc, StatusWithoutUidIsRefused) {
  write("300/status", "Name:\tapp\nState:\tS (sleeping)\nPPid:\t1\n");
  EXPECT_EQ(check(user_, 300).verdict, PtraceVerdict::kRefused);
  // With the capability the owner does not matter.
  EXPECT_EQ(check(root_tracer_, 300).verdict, PtraceVerdict::kAllowed);
}

TEST_F(FakeProc, CurrentProcessReadsCapEffBit19) {
  write("self/status", "Name:\tnk\nCapEff:\t0000000000080000\n");
  auto tracer = PtraceAccess(root_.path()).currentProcess();
  ASSERT_TRUE(tracer.ok()) << tracer.error().message;
  EXPECT_TRUE(tracer->cap_sys_ptrace);
  EXPECT_EQ(tracer->uid, getuid());
  EXPECT_EQ(tracer->gid, getgid());
  EXPECT_EQ(tracer->pid, getpid());

  write("self/status", "Name:\tnk\nCapEff:\t000001fffff7ffff\n");  // all but bit 19
  tracer = PtraceAccess(root_.path()).currentProcess();
  ASSERT_TRUE(tracer.ok());
  EXPECT_FALSE(tracer->cap_sys_ptrace);
}

TEST_F(FakeProc, CurrentProcessErrors) {
  EXPECT_FALSE(PtraceAccess(root_.path()).currentProcess().ok());  // no self/status
  write("self/status", "Name:\tnk\n");
  auto no_line = PtraceAccess(root_.path()).currentProcess();
  ASSERT_FALSE(no_line.ok());
  EXPECT_TRUE(has(no_line.error().message, "CapEff"));
  write("self/status", "Name:\tnk\nCapEff:\tzz\n");
  EXPECT_FALSE(PtraceAccess(root_.path()).currentProcess().ok());
}

// Against the real /proc: whatever this machine's Yama says, a process may
// trace its own child (same user; and scope 1 allows descendants).
TEST(PtraceAccessRealProc, OwnChildAndGoneChild) {
  PtraceAccess access;
  auto tracer = access.currentProcess();
  ASSERT_TRUE(tracer.ok()) << tracer.error().message;
  auto scope = access.yamaScope();
  ASSERT_TRUE(scope.ok()) << scope.error().message;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  auto d = access.check(*tracer, child);
  if (scope->value_or(0) >= 3 || (scope->value_or(0) == 2 && !tracer->cap_sys_ptrace)) {
    EXPECT_EQ(d.verdict, PtraceVerdict::kRefused) << d.explanation;
  } else {
    EXPECT_EQ(d.verdict, PtraceVerdict::kAllowed) << d.explanation;
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(access.check(*tracer, child).verdict, PtraceVerdict::kTargetGone);
}

}  // namespace
}  // namespace nk
