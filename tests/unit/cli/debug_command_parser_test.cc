#include "cli/debug_command_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nk::cli {
namespace {

namespace v1 = nodekeeper::v1;
using Kind = DebugLine::Kind;

DebugLine parsed(std::string_view line) {
  Result<DebugLine> r = DebugCommandParser::parse(line);
  EXPECT_TRUE(r.ok()) << "'" << line << "': " << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : DebugLine{};
}

DebugLine remote(std::string_view line) {
  DebugLine d = parsed(line);
  EXPECT_EQ(d.kind, Kind::kRemote) << line;
  EXPECT_EQ(d.remote.command_id(), 0u) << line;
  return d;
}

// The error's message for a line that must not parse.
std::string errorOf(std::string_view line) {
  Result<DebugLine> r = DebugCommandParser::parse(line);
  EXPECT_FALSE(r.ok()) << "'" << line << "' parsed, but it should not";
  if (r.ok()) return "";
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << line;
  EXPECT_FALSE(r.error().message.empty()) << line;
  return r.error().message;
}

std::vector<uint64_t> ids(const google::protobuf::RepeatedField<uint64_t>& field) {
  return {field.begin(), field.end()};
}

#define EXPECT_ERROR_HAS(line, part)                                                   \
  do {                                                                                 \
    std::string message_ = errorOf(line);                                              \
    EXPECT_NE(message_.find(part), std::string::npos) << "'" << (line) << "' gave: " << message_; \
  } while (0)

// ---- the forms of helpText() -------------------------------------------

TEST(DebugCommandParserTest, Break) {
  DebugLine d = remote("break");
  EXPECT_EQ(d.remote.action_case(), v1::DebugCommand::kBreakAll);
  EXPECT_EQ(d.text, "break");
}

TEST(DebugCommandParserTest, Continue) {
  DebugLine d = remote("continue");
  EXPECT_EQ(d.remote.action_case(), v1::DebugCommand::kContinueAll);
}

TEST(DebugCommandParserTest, StepDefaultsToOne) {
  DebugLine d = remote("step");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kStep);
  EXPECT_EQ(d.remote.step().tasks(), 1u);
}

TEST(DebugCommandParserTest, StepN) {
  EXPECT_EQ(remote("step 5").remote.step().tasks(), 5u);
  EXPECT_EQ(remote("step 1000000").remote.step().tasks(), 1000000u);
}

TEST(DebugCommandParserTest, BlockTasksDecimalAndHex) {
  DebugLine d = remote("block 7 0x1F 0X10 42");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kBlock);
  EXPECT_EQ(ids(d.remote.block().task_ids()), (std::vector<uint64_t>{7, 31, 16, 42}));
  EXPECT_TRUE(d.remote.block().blocked());
}

TEST(DebugCommandParserTest, BlockLargeIds) {
  DebugLine d = remote("block 0xffffffffffffffff 18446744073709551615 0x30000000007");
  EXPECT_EQ(ids(d.remote.block().task_ids()),
            (std::vector<uint64_t>{UINT64_MAX, UINT64_MAX, (uint64_t{3} << 40) | 7}));
}

TEST(DebugCommandParserTest, UnblockTasks) {
  DebugLine d = remote("unblock 3 0xa");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kBlock);
  EXPECT_EQ(ids(d.remote.block().task_ids()), (std::vector<uint64_t>{3, 10}));
  EXPECT_FALSE(d.remote.block().blocked());
}

TEST(DebugCommandParserTest, BlockFunction) {
  DebugLine d = remote("block function compute_tile");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kBlockFunction);
  EXPECT_EQ(d.remote.block_function().function(), "compute_tile");
  EXPECT_TRUE(d.remote.block_function().blocked());
  EXPECT_EQ(d.remote.block_function().task_ids_size(), 0);  // the daemon fills them in
}

TEST(DebugCommandParserTest, UnblockFunction) {
  DebugLine d = remote("unblock function ns::f(int)");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kBlockFunction);
  EXPECT_EQ(d.remote.block_function().function(), "ns::f(int)");
  EXPECT_FALSE(d.remote.block_function().blocked());
}

TEST(DebugCommandParserTest, Priority) {
  DebugLine d = remote("priority 0x2a 5");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kPriority);
  EXPECT_EQ(d.remote.priority().task_id(), 42u);
  EXPECT_EQ(d.remote.priority().level(), 5);
  EXPECT_EQ(remote("priority 9 -3").remote.priority().level(), -3);
  EXPECT_EQ(remote("priority 9 0").remote.priority().level(), 0);
  EXPECT_EQ(remote("priority 9 2147483647").remote.priority().level(), INT32_MAX);
}

TEST(DebugCommandParserTest, PauseEveryEvent) {
  struct Case {
    const char* word;
    v1::PauseEvent event;
  };
  for (Case c : {Case{"task_start", v1::PAUSE_EVENT_TASK_START}, Case{"task_end", v1::PAUSE_EVENT_TASK_END},
                 Case{"taskwait", v1::PAUSE_EVENT_TASKWAIT}, Case{"barrier", v1::PAUSE_EVENT_BARRIER}}) {
    DebugLine on = remote(std::string("pause ") + c.word);
    ASSERT_EQ(on.remote.action_case(), v1::DebugCommand::kPauseOn) << c.word;
    EXPECT_EQ(on.remote.pause_on().event(), c.event) << c.word;
    EXPECT_TRUE(on.remote.pause_on().enabled()) << c.word;

    DebugLine off = remote(std::string("pause off ") + c.word);
    ASSERT_EQ(off.remote.action_case(), v1::DebugCommand::kPauseOn) << c.word;
    EXPECT_EQ(off.remote.pause_on().event(), c.event) << c.word;
    EXPECT_FALSE(off.remote.pause_on().enabled()) << c.word;
  }
}

TEST(DebugCommandParserTest, Threads) {
  DebugLine d = remote("threads 8");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kThreads);
  EXPECT_EQ(d.remote.threads(), 8u);
  EXPECT_EQ(remote("threads 1").remote.threads(), 1u);
  EXPECT_EQ(remote("threads 4096").remote.threads(), 4096u);
}

TEST(DebugCommandParserTest, Status) {
  EXPECT_EQ(remote("status").remote.action_case(), v1::DebugCommand::kStatus);
}

TEST(DebugCommandParserTest, WaitFinishedParkedTasksWithDefaultTimeout) {
  struct Case {
    const char* word;
    Kind kind;
  };
  for (Case c : {Case{"finished", Kind::kWaitFinished}, Case{"parked", Kind::kWaitParked},
                 Case{"tasks", Kind::kWaitTasks}}) {
    DebugLine d = parsed(std::string("wait ") + c.word + " 12");
    EXPECT_EQ(d.kind, c.kind) << c.word;
    EXPECT_EQ(d.count, 12u) << c.word;
    EXPECT_DOUBLE_EQ(d.seconds, 60.0) << c.word;
    EXPECT_EQ(d.remote.action_case(), v1::DebugCommand::ACTION_NOT_SET) << c.word;

    DebugLine t = parsed(std::string("wait ") + c.word + " 3 2.5");
    EXPECT_EQ(t.kind, c.kind) << c.word;
    EXPECT_EQ(t.count, 3u) << c.word;
    EXPECT_DOUBLE_EQ(t.seconds, 2.5) << c.word;
  }
  // Zero is a fine count (already true) and a fine timeout.
  DebugLine z = parsed("wait parked 0 0");
  EXPECT_EQ(z.count, 0u);
  EXPECT_DOUBLE_EQ(z.seconds, 0.0);
}

TEST(DebugCommandParserTest, WaitSeconds) {
  DebugLine d = parsed("wait seconds 1.25");
  EXPECT_EQ(d.kind, Kind::kWaitSeconds);
  EXPECT_DOUBLE_EQ(d.seconds, 1.25);
  EXPECT_EQ(d.remote.action_case(), v1::DebugCommand::ACTION_NOT_SET);
  EXPECT_DOUBLE_EQ(parsed("wait seconds 0").seconds, 0.0);
  EXPECT_DOUBLE_EQ(parsed("wait seconds 86400").seconds, 86400.0);
  EXPECT_DOUBLE_EQ(parsed("wait seconds 3").seconds, 3.0);
}

TEST(DebugCommandParserTest, Gdb) {
  DebugLine plain = parsed("gdb");
  EXPECT_EQ(plain.kind, Kind::kGdb);
  EXPECT_EQ(plain.function, "");
  EXPECT_EQ(plain.remote.action_case(), v1::DebugCommand::ACTION_NOT_SET);
  DebugLine with = parsed("gdb compute_tile");
  EXPECT_EQ(with.kind, Kind::kGdb);
  EXPECT_EQ(with.function, "compute_tile");
}

TEST(DebugCommandParserTest, HelpQuitExit) {
  EXPECT_EQ(parsed("help").kind, Kind::kHelp);
  EXPECT_EQ(parsed("quit").kind, Kind::kQuit);
  EXPECT_EQ(parsed("exit").kind, Kind::kQuit);
}

TEST(DebugCommandParserTest, EveryCommandWordIsInTheHelpAndParses) {
  const std::string help = DebugCommandParser::helpText();
  // A valid line for each word commandWords() lists.
  const std::vector<std::pair<std::string, std::string>> lines{
      {"break", "break"},           {"continue", "continue"},  {"step", "step 2"},
      {"block", "block 1"},         {"unblock", "unblock 1"},  {"priority", "priority 1 1"},
      {"pause", "pause barrier"},   {"threads", "threads 2"},  {"wait", "wait seconds 1"},
      {"status", "status"},         {"gdb", "gdb"},            {"help", "help"},
      {"quit", "quit"},
  };
  ASSERT_EQ(DebugCommandParser::commandWords().size(), lines.size());
  for (const std::string& word : DebugCommandParser::commandWords()) {
    EXPECT_NE(help.find(word), std::string::npos) << word << " is not in the help";
    bool found = false;
    for (const auto& [w, line] : lines)
      if (w == word) {
        found = true;
        EXPECT_TRUE(DebugCommandParser::parse(line).ok()) << line;
      }
    EXPECT_TRUE(found) << "no test line for '" << word << "'";
  }
}

// ---- text, comments, blank lines ----------------------------------------

TEST(DebugCommandParserTest, BlankLinesAreEmpty) {
  for (const char* line : {"", "   ", "\t", " \t  \n"}) {
    DebugLine d = parsed(line);
    EXPECT_EQ(d.kind, Kind::kEmpty) << "'" << line << "'";
    EXPECT_EQ(d.text, "");
  }
}

TEST(DebugCommandParserTest, CommentsAreIgnored) {
  EXPECT_EQ(parsed("# a whole comment").kind, Kind::kEmpty);
  EXPECT_EQ(parsed("   #indented").kind, Kind::kEmpty);
  EXPECT_EQ(parsed("#").kind, Kind::kEmpty);
  DebugLine d = remote("break   # stop everything");
  EXPECT_EQ(d.remote.action_case(), v1::DebugCommand::kBreakAll);
  EXPECT_EQ(d.text, "break");
  // A comment right after a word, and a comment with words a command would reject.
  EXPECT_EQ(remote("step 3#three").remote.step().tasks(), 3u);
  EXPECT_EQ(remote("status # status now please").remote.action_case(), v1::DebugCommand::kStatus);
  EXPECT_EQ(parsed("gdb f # set a breakpoint").function, "f");
}

TEST(DebugCommandParserTest, TextIsTrimmedWithSingleSpaces) {
  DebugLine d = remote("  \tblock   1\t 2  ");
  EXPECT_EQ(d.text, "block 1 2");
  EXPECT_EQ(ids(d.remote.block().task_ids()), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(parsed(" wait  seconds   2 ").text, "wait seconds 2");
}

// ---- bad input ----------------------------------------------------------

TEST(DebugCommandParserTest, UnknownCommand) {
  EXPECT_ERROR_HAS("frobnicate", "unknown command 'frobnicate'");
  EXPECT_ERROR_HAS("frobnicate 1 2", "try 'help'");
  EXPECT_ERROR_HAS("BREAK", "unknown command 'BREAK'");  // words are case-sensitive
  EXPECT_ERROR_HAS("breakall", "unknown command");
}

TEST(DebugCommandParserTest, ExtraArgumentsAreRefused) {
  EXPECT_ERROR_HAS("break now", "usage: break");
  EXPECT_ERROR_HAS("continue 1", "usage: continue");
  EXPECT_ERROR_HAS("step 1 2", "usage: step [N]");
  EXPECT_ERROR_HAS("priority 1 2 3", "usage: priority TASK LEVEL");
  EXPECT_ERROR_HAS("pause task_start task_end", "usage: pause EVENT | pause off EVENT");
  EXPECT_ERROR_HAS("pause off task_start task_end", "usage: pause");
  EXPECT_ERROR_HAS("threads 1 2", "usage: threads N");
  EXPECT_ERROR_HAS("status all", "usage: status");
  EXPECT_ERROR_HAS("wait seconds 1 2", "usage: wait seconds S");
  EXPECT_ERROR_HAS("wait finished 1 2 3", "usage: wait finished|parked|tasks N [TIMEOUT]");
  EXPECT_ERROR_HAS("gdb f g", "usage: gdb [FUNCTION]");
}

TEST(DebugCommandParserTest, FunctionNamesWithSpacesAreTheRestOfTheLine) {
  DebugLine d = remote("block function fib (fib.c:31)");
  ASSERT_EQ(d.remote.action_case(), v1::DebugCommand::kBlockFunction);
  EXPECT_EQ(d.remote.block_function().function(), "fib (fib.c:31)");
  d = remote("unblock function   ns::f<int, long>   (f.cc:3)");
  EXPECT_EQ(d.remote.block_function().function(), "ns::f<int, long> (f.cc:3)");
  EXPECT_FALSE(d.remote.block_function().blocked());
}

TEST(DebugCommandParserTest, MissingArgumentsAreRefused) {
  EXPECT_ERROR_HAS("block", "block: name a task");
  EXPECT_ERROR_HAS("unblock", "unblock: name a task");
  EXPECT_ERROR_HAS("block function", "block function: give one function name");
  EXPECT_ERROR_HAS("unblock function", "unblock function: give one function name");
  EXPECT_ERROR_HAS("priority", "usage: priority TASK LEVEL");
  EXPECT_ERROR_HAS("priority 5", "usage: priority TASK LEVEL");
  EXPECT_ERROR_HAS("pause", "usage: pause EVENT");
  EXPECT_ERROR_HAS("threads", "usage: threads N");
  EXPECT_ERROR_HAS("wait", "usage: wait finished N");
  EXPECT_ERROR_HAS("wait finished", "usage: wait finished N");
  EXPECT_ERROR_HAS("wait seconds", "wait seconds S");
}

TEST(DebugCommandParserTest, TaskIdZeroIsRefused) {
  EXPECT_ERROR_HAS("block 0", "'0' is not a task id");
  EXPECT_ERROR_HAS("block 0x0", "'0x0' is not a task id");
  EXPECT_ERROR_HAS("block 1 0", "block: '0' is not a task id");
  EXPECT_ERROR_HAS("unblock 0", "unblock: '0' is not a task id");
  EXPECT_ERROR_HAS("priority 0 1", "priority: '0' is not a task id");
}

TEST(DebugCommandParserTest, BadTaskIdsAreRefused) {
  for (const char* bad : {"x", "-1", "+1", "1.0", "12abc", "0x", "0xg", "0x1g", "0x-1", "18446744073709551616",
                          "0x10000000000000000"}) {
    std::string line = std::string("block ") + bad;
    EXPECT_ERROR_HAS(line, "'" + std::string(bad) + "' is not a task id");
  }
  // The message says what a task id is.
  EXPECT_ERROR_HAS("block nope", "decimal or 0x hex");
  // One bad id spoils the line.
  EXPECT_ERROR_HAS("block 1 2 three", "'three' is not a task id");
  EXPECT_ERROR_HAS("priority abc 1", "priority: 'abc' is not a task id");
}

TEST(DebugCommandParserTest, BadPriorityLevelIsRefused) {
  EXPECT_ERROR_HAS("priority 1 high", "priority: 'high' is not a whole number");
  EXPECT_ERROR_HAS("priority 1 1.5", "'1.5' is not a whole number");
  EXPECT_ERROR_HAS("priority 1 2147483648", "is not a whole number");  // out of int32
}

TEST(DebugCommandParserTest, BadStepIsRefused) {
  EXPECT_ERROR_HAS("step 0", "step: '0' is not a number from 1 to 1000000");
  EXPECT_ERROR_HAS("step -1", "step: '-1' is not a number");
  EXPECT_ERROR_HAS("step two", "step: 'two' is not a number");
  EXPECT_ERROR_HAS("step 1000001", "from 1 to 1000000");
  EXPECT_ERROR_HAS("step 1.5", "step: '1.5'");
  EXPECT_ERROR_HAS("step 0x2", "step: '0x2'");  // counts are decimal
}

TEST(DebugCommandParserTest, BadThreadsIsRefused) {
  EXPECT_ERROR_HAS("threads 0", "threads: '0' is not a number from 1 to 4096");
  EXPECT_ERROR_HAS("threads 4097", "from 1 to 4096");
  EXPECT_ERROR_HAS("threads many", "threads: 'many'");
}

TEST(DebugCommandParserTest, PauseWithBadEventIsRefused) {
  EXPECT_ERROR_HAS("pause bogus", "pause: 'bogus' is not an event");
  EXPECT_ERROR_HAS("pause bogus", "task_start, task_end, taskwait, barrier");
  EXPECT_ERROR_HAS("pause off bogus", "pause: 'bogus' is not an event");
  EXPECT_ERROR_HAS("pause TASK_START", "'TASK_START' is not an event");
  // "off" alone names no event.
  EXPECT_ERROR_HAS("pause off", "'off' is not an event");
  // Two words must be "off EVENT".
  EXPECT_ERROR_HAS("pause on barrier", "usage: pause EVENT | pause off EVENT");
}

TEST(DebugCommandParserTest, WaitWithBadKindIsRefused) {
  EXPECT_ERROR_HAS("wait forever 1", "wait: 'forever' is not finished, parked, tasks or seconds");
  EXPECT_ERROR_HAS("wait minutes 5", "'minutes' is not finished, parked, tasks or seconds");
}

TEST(DebugCommandParserTest, WaitWithBadNumbersIsRefused) {
  EXPECT_ERROR_HAS("wait finished many", "wait finished: 'many' is not a number");
  EXPECT_ERROR_HAS("wait parked -1", "wait parked: '-1' is not a number");
  EXPECT_ERROR_HAS("wait tasks 1.5", "wait tasks: '1.5' is not a number");
  EXPECT_ERROR_HAS("wait finished 1 soon", "wait finished timeout: 'soon' is not a number of seconds");
  EXPECT_ERROR_HAS("wait parked 1 -1", "wait parked timeout: '-1'");
  EXPECT_ERROR_HAS("wait tasks 1 86401", "(0 to 86400)");
  EXPECT_ERROR_HAS("wait seconds -0.5", "wait seconds: '-0.5' is not a number of seconds");
  EXPECT_ERROR_HAS("wait seconds 86400.5", "(0 to 86400)");
  EXPECT_ERROR_HAS("wait seconds soon", "wait seconds: 'soon'");
  EXPECT_ERROR_HAS("wait seconds 2s", "wait seconds: '2s'");
  EXPECT_ERROR_HAS("wait seconds inf", "wait seconds: 'inf'");
  EXPECT_ERROR_HAS("wait seconds nan", "wait seconds: 'nan'");
  EXPECT_ERROR_HAS("wait seconds 1e400", "wait seconds: '1e400'");  // out of double's range
}

TEST(DebugCommandParserTest, ErrorsAfterACommentAreNotSeen) {
  // What follows '#' is not parsed at all.
  EXPECT_TRUE(DebugCommandParser::parse("break # step 0").ok());
  // ...but the part before it is.
  EXPECT_ERROR_HAS("step 0 # zero", "step: '0'");
}

}  // namespace
}  // namespace nk::cli
