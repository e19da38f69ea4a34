#include "cli/replay_console.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nk::cli {
namespace {

using Type = GraphEvent::Type;

GraphEvent created(uint64_t task, std::string_view function) {
  GraphEvent e;
  e.type = Type::kCreated;
  e.task = task;
  e.function = function;
  return e;
}

GraphEvent event(Type type, uint64_t task, int32_t thread = -1) {
  GraphEvent e;
  e.type = type;
  e.task = task;
  e.thread = thread;
  return e;
}

GraphEvent dependence(uint64_t from, uint64_t to, uint64_t address) {
  GraphEvent e;
  e.type = Type::kDependence;
  e.from = from;
  e.task = to;
  e.address = address;
  return e;
}

// A chain 1 -> 2 of function "left" and a lone 3 of "right": 10 events.
// The names live in strings that are gone before the console uses them,
// as a recording's batch is reused for its next frame.
std::vector<GraphEvent> chain(std::vector<std::unique_ptr<std::string>>& scratch) {
  scratch.push_back(std::make_unique<std::string>("left"));
  scratch.push_back(std::make_unique<std::string>("right"));
  return {created(1, *scratch[0]),        created(2, *scratch[0]),       dependence(1, 2, 0x1000),
          created(3, *scratch[1]),        event(Type::kStarted, 1, 0),   event(Type::kStarted, 3, 1),
          event(Type::kFinished, 1),      event(Type::kStarted, 2, 0),   event(Type::kFinished, 3),
          event(Type::kFinished, 2)};
}

struct Fixture {
  std::ostringstream out, err;
  ReplayConsole console;

  explicit Fixture(bool json) : console("rec.nkrec", out, err, json) {
    std::vector<std::unique_ptr<std::string>> scratch;
    auto events = chain(scratch);
    console.append(std::span<const GraphEvent>(events).first(4));
    console.append(std::span<const GraphEvent>(events).subspan(4));
    // Overwritten and freed: the console must hold its own copies.
    for (auto& s : scratch) s->assign("XXXXXXXX");
    scratch.clear();
  }

  int run(const std::vector<std::string>& lines) {
    size_t next = 0;
    return console.run([&]() -> std::optional<std::string> {
      if (next == lines.size()) return std::nullopt;
      return lines[next++];
    });
  }

  std::vector<nlohmann::json> jsonLines() const {
    std::vector<nlohmann::json> out_lines;
    std::istringstream in(out.str());
    for (std::string line; std::getline(in, line);) out_lines.push_back(nlohmann::json::parse(line));
    return out_lines;
  }
};

TEST(ReplayConsoleTest, NextAppliesAndPrintsEachEvent) {
  Fixture f(false);
  EXPECT_EQ(f.console.total(), 10u);
  EXPECT_EQ(f.run({"next", "next 4"}), 0) << f.err.str();
  EXPECT_EQ(f.console.position(), 5u);
  const std::string text = f.out.str();
  EXPECT_NE(text.find("event 1/10: created task 1 (left)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("event 3/10: dependence task 1 -> task 2 on 0x1000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("event 4/10: created task 3 (right)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("event 5/10: started task 1 on thread 0\n"), std::string::npos) << text;
  EXPECT_EQ(f.console.graph().tasks().size(), 3u);
  EXPECT_EQ(f.console.graph().countsByState()[static_cast<size_t>(TaskState::kRunning)], 1u);
}

TEST(ReplayConsoleTest, NextStopsAtTheEndAndThenFails) {
  Fixture f(false);
  EXPECT_EQ(f.run({"next 100"}), 0);
  EXPECT_EQ(f.console.position(), 10u);
  EXPECT_EQ(f.run({"next"}), 1);
  EXPECT_NE(f.err.str().find("no more events (event 10/10)"), std::string::npos) << f.err.str();
  EXPECT_EQ(f.run({"next 0"}), 1);
  EXPECT_EQ(f.run({"next x"}), 1);
}

TEST(ReplayConsoleTest, StatusHasTheLiveConsolesCountsFunctionsAndReady) {
  Fixture f(false);
  EXPECT_EQ(f.run({"next 5", "status"}), 0);
  const std::string text = f.out.str();
  EXPECT_NE(text.find("replay of rec.nkrec: event 5/10, no control\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tasks: not_queued 2, queued 0, running 1, finished 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  left"), std::string::npos) << text;
  EXPECT_NE(text.find("  right"), std::string::npos) << text;
  EXPECT_EQ(text.find("XXXX"), std::string::npos) << text;
  // Task 2 waits for task 1; task 3 may start.
  EXPECT_NE(text.find("ready: 3\n"), std::string::npos) << text;
}

TEST(ReplayConsoleTest, UntilFinishedAndUntilTask) {
  Fixture f(true);
  EXPECT_EQ(f.run({"until finished 1", "until task 2 started", "until task 0x2 finished", "status"}), 0)
      << f.out.str();
  auto lines = f.jsonLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0]["event"], 7);  // task 1 finishes with event 7
  EXPECT_EQ(lines[1]["event"], 8);
  EXPECT_EQ(lines[2]["event"], 10);
  const auto& status = lines[3]["status"];
  EXPECT_EQ(status["finished"], 3);
  EXPECT_EQ(status["running"], 0);
  EXPECT_EQ(status["live"], false);
  ASSERT_EQ(status["functions"].size(), 2u);
  EXPECT_EQ(status["functions"][0]["function"], "left");
  EXPECT_EQ(status["functions"][0]["finished"], 2);
  EXPECT_EQ(status["functions"][1]["function"], "right");
  EXPECT_TRUE(status["ready"].empty());
}

TEST(ReplayConsoleTest, UntilFailsWhenTheRecordingEndsFirst) {
  Fixture f(true);
  EXPECT_EQ(f.run({"until finished 4"}), 1);
  auto lines = f.jsonLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["ok"], false);
  EXPECT_NE(lines[0]["error"].get<std::string>().find("ended with 3 finished"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0]["event"], 10);
  Fixture g(false);
  EXPECT_EQ(g.run({"until task 9 started"}), 1);
  EXPECT_EQ(g.run({"until task 1 runs"}), 1);
}

TEST(ReplayConsoleTest, GotoRebuildsFromTheStart) {
  Fixture f(false);
  EXPECT_EQ(f.run({"next 10", "goto 4"}), 0);
  EXPECT_EQ(f.console.position(), 4u);
  // Rebuilt, not rolled back: nothing has started at event 4.
  EXPECT_EQ(f.console.graph().countsByState()[static_cast<size_t>(TaskState::kFinished)], 0u);
  EXPECT_EQ(f.console.graph().countsByState()[static_cast<size_t>(TaskState::kRunning)], 0u);
  EXPECT_EQ(f.console.graph().tasks().size(), 3u);
  EXPECT_EQ(f.run({"goto 7"}), 0);
  EXPECT_EQ(f.console.graph().countsByState()[static_cast<size_t>(TaskState::kFinished)], 1u);
  EXPECT_EQ(f.run({"goto 0"}), 0);
  EXPECT_TRUE(f.console.graph().tasks().empty());
  EXPECT_EQ(f.run({"goto 11"}), 1);
  EXPECT_EQ(f.console.position(), 0u);
}

TEST(ReplayConsoleTest, ControlCommandsAreRefusedAndChangeNothing) {
  Fixture f(true);
  EXPECT_EQ(f.run({"next 2", "break", "step 3", "block 1", "continue", "threads 2", "pause task_start"}), 1);
  auto lines = f.jsonLines();
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0]["ok"], true);
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["ok"], false) << lines[i];
    EXPECT_EQ(lines[i]["error"], "replay: a recording cannot be steered") << lines[i];
    EXPECT_EQ(lines[i]["event"], 2) << lines[i];
  }
  EXPECT_EQ(f.console.position(), 2u);
}

TEST(ReplayConsoleTest, HelpQuitBlankAndUnknownLines) {
  Fixture f(false);
  EXPECT_EQ(f.run({"", "  ", "help", "quit", "next"}), 0);
  EXPECT_NE(f.out.str().find("until task ID started|finished"), std::string::npos) << f.out.str();
  EXPECT_EQ(f.console.position(), 0u);  // nothing after quit
  EXPECT_EQ(f.run({"frobnicate"}), 1);
  EXPECT_NE(f.err.str().find("unknown command 'frobnicate'"), std::string::npos) << f.err.str();
}

TEST(ReplayConsoleTest, AnEmptyRecordingHasNothingToStepThrough) {
  std::ostringstream out, err;
  ReplayConsole console("empty", out, err, false);
  bool quit = false;
  EXPECT_TRUE(console.runLine("status", &quit));
  EXPECT_NE(out.str().find("event 0/0"), std::string::npos) << out.str();
  EXPECT_FALSE(console.runLine("next", &quit));
  EXPECT_TRUE(console.runLine("goto 0", &quit));
}

}  // namespace
}  // namespace nk::cli
