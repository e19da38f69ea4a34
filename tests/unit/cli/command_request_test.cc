#include "cli/ui/command_request.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace v1 = nodekeeper::v1;

namespace nk::ui {
namespace {

CommandRequest parsed(const std::string& body) {
  auto request = CommandRequest::parse(body);
  EXPECT_TRUE(request.ok()) << body << ": " << (request ? "" : request.error().message);
  return request ? *request : CommandRequest();
}

TEST(CommandRequest, TranslatesEveryAction) {
  EXPECT_TRUE(parsed(R"({"action":"break"})").command.has_break_all());
  EXPECT_TRUE(parsed(R"({"action":"continue"})").command.has_continue_all());
  EXPECT_TRUE(parsed(R"({"action":"status"})").command.has_status());
  EXPECT_EQ(parsed(R"({"action":"step","tasks":3})").command.step().tasks(), 3u);

  auto block = parsed(R"({"action":"block","task":1099511627777})").command;
  ASSERT_EQ(block.block().task_ids_size(), 1);
  EXPECT_EQ(block.block().task_ids(0), 1099511627777ULL);
  EXPECT_TRUE(block.block().blocked());
  EXPECT_FALSE(parsed(R"({"action":"unblock","task":5})").command.block().blocked());

  auto function = parsed(R"({"action":"block_function","function":"fib"})").command;
  EXPECT_EQ(function.block_function().function(), "fib");
  EXPECT_TRUE(function.block_function().blocked());
  EXPECT_FALSE(parsed(R"({"action":"unblock_function","function":"fib"})").command.block_function().blocked());

  auto priority = parsed(R"({"action":"priority","task":7,"level":-2})").command;
  EXPECT_EQ(priority.priority().task_id(), 7u);
  EXPECT_EQ(priority.priority().level(), -2);

  auto pause = parsed(R"({"action":"pause_on","event":"taskwait","enabled":true})").command;
  EXPECT_EQ(pause.pause_on().event(), v1::PAUSE_EVENT_TASKWAIT);
  EXPECT_TRUE(pause.pause_on().enabled());
  EXPECT_EQ(parsed(R"({"action":"pause_on","event":"task_start","enabled":false})").command.pause_on().event(),
            v1::PAUSE_EVENT_TASK_START);

  EXPECT_EQ(parsed(R"({"action":"threads","count":4})").command.threads(), 4u);

  auto gdb = parsed(R"({"action":"gdb","function":"fib"})");
  EXPECT_TRUE(gdb.gdb);
  EXPECT_EQ(gdb.gdb_function, "fib");
  EXPECT_EQ(gdb.command.action_case(), v1::DebugCommand::ACTION_NOT_SET);
  EXPECT_TRUE(parsed(R"({"action":"gdb"})").gdb);
}

// Each bad body, and a word its one-line error must hold.
TEST(CommandRequest, EveryBadBodyIsOneErrorNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not JSON"},
      {"{", "not JSON"},
      {"[]", "object"},
      {"\"break\"", "object"},
      {"{}", "'action'"},
      {R"({"action":3})", "'action'"},
      {R"({"action":"explode"})", "'explode'"},
      {R"({"action":"step"})", "'tasks'"},
      {R"({"action":"step","tasks":0})", "'tasks'"},
      {R"({"action":"step","tasks":-1})", "'tasks'"},
      {R"({"action":"step","tasks":1.5})", "'tasks'"},
      {R"({"action":"step","tasks":"1"})", "'tasks'"},
      {R"({"action":"step","tasks":4294967296})", "'tasks'"},
      {R"({"action":"block"})", "'task'"},
      {R"({"action":"block","task":0})", "'task'"},
      {R"({"action":"unblock","task":"7"})", "'task'"},
      {R"({"action":"block_function"})", "'function'"},
      {R"({"action":"block_function","function":""})", "'function'"},
      {R"({"action":"unblock_function","function":7})", "'function'"},
      {R"({"action":"block_function","function":"a\nb"})", "'function'"},
      {R"({"action":"priority","level":1})", "'task'"},
      {R"({"action":"priority","task":1})", "'level'"},
      {R"({"action":"priority","task":1,"level":2147483648})", "'level'"},
      {R"({"action":"priority","task":1,"level":true})", "'level'"},
      {R"({"action":"pause_on","enabled":true})", "'event'"},
      {R"({"action":"pause_on","event":"lunch","enabled":true})", "'event'"},
      {R"({"action":"pause_on","event":"barrier"})", "'enabled'"},
      {R"({"action":"pause_on","event":"barrier","enabled":1})", "'enabled'"},
      {R"({"action":"threads"})", "'count'"},
      {R"({"action":"threads","count":0})", "'count'"},
      {R"({"action":"gdb","function":["fib"]})", "'function'"},
  };
  for (const auto& [body, word] : cases) {
    auto request = CommandRequest::parse(body);
    ASSERT_FALSE(request.ok()) << body;
    EXPECT_EQ(request.error().code, ErrorCode::kInvalidArgument) << body;
    EXPECT_NE(request.error().message.find(word), std::string::npos) << body << " -> " << request.error().message;
    EXPECT_EQ(request.error().message.find('\n'), std::string::npos) << request.error().message;
  }
}

}  // namespace
}  // namespace nk::ui
