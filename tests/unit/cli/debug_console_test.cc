#include "cli/debug_console.h"

#include <gtest/gtest.h>

#include <string>

namespace nk::cli {
namespace {

namespace v1 = nodekeeper::v1;

v1::DebugStatus cutStatus() {
  v1::DebugStatus s;
  s.set_session_id(3);
  s.set_live(true);
  s.set_parked_workers(2);
  s.set_queued(70);
  for (uint64_t id = 1; id <= 64; ++id) s.add_ready(id);
  s.set_ready_total(70);
  s.add_blocked(100);
  s.add_blocked(101);
  s.set_blocked_total(5);
  s.set_stall("all 2 workers are held by blocked tasks of fib (3 tasks); 'unblock function fib' frees them");
  return s;
}

TEST(DebugConsoleStatus, TextSaysHowManyMoreThanListedAndTheStall) {
  std::string text = DebugConsole::statusText(cutStatus());
  EXPECT_NE(text.find(" 63 64 \u2026 and 6 more\n"), std::string::npos) << text;
  EXPECT_NE(text.find("blocked: 100 101 \u2026 and 3 more\n"), std::string::npos) << text;
  EXPECT_NE(text.find("stalled: all 2 workers are held by blocked tasks of fib (3 tasks); 'unblock function fib' "
                      "frees them\n"),
            std::string::npos)
      << text;
}

TEST(DebugConsoleStatus, AWholeListSaysNothingMore) {
  v1::DebugStatus s;
  s.add_ready(7);
  s.set_ready_total(1);
  std::string text = DebugConsole::statusText(s);
  EXPECT_NE(text.find("ready: 7\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("more"), std::string::npos) << text;
  EXPECT_EQ(text.find("stalled"), std::string::npos) << text;
}

TEST(DebugConsoleStatus, JsonCarriesTheTotalsAndTheStall) {
  auto json = DebugConsole::statusJson(cutStatus());
  EXPECT_EQ(json["ready"].size(), 64u);
  EXPECT_EQ(json["ready_total"], 70);
  EXPECT_EQ(json["blocked_total"], 5);
  EXPECT_EQ(json["stall"].get<std::string>().rfind("all 2 workers", 0), 0u);
}

TEST(DebugConsoleStatus, JsonTotalsOfADaemonThatSendsNoneAreTheListsLength) {
  v1::DebugStatus s;
  s.add_ready(7);
  s.add_ready(8);
  auto json = DebugConsole::statusJson(s);
  EXPECT_EQ(json["ready_total"], 2);
  EXPECT_EQ(json["blocked_total"], 0);
  EXPECT_EQ(json["stall"], "");
}

}  // namespace
}  // namespace nk::cli
