#include "cli/ui/ui_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli/command_line.h"
#include "cli/command_table.h"

namespace nk::ui {
namespace {

TEST(UiCommand, ABadPortIsOneLineNamingItAndNothingIsServed) {
  for (const char* port : {"-1", "65536", "http", "80x", "", "99999999999999999999"}) {
    auto invocation = cli::CommandLine::parse({"--socket", "/nonexistent/nk.sock", "ui", "--port", port});
    ASSERT_TRUE(invocation.ok()) << port << ": " << invocation.error().message;
    std::ostringstream out, err;
    EXPECT_EQ(UiCommand::run(*invocation, out, err), 1) << port;
    EXPECT_EQ(out.str(), "") << port;
    EXPECT_EQ(err.str(), "nodekeeper: ui: --port '" + std::string(port) +
                             "' is not a port number from 0 to 65535 (0: any free one)\n");
  }
}

TEST(UiCommand, ItsHelpSaysWhatItServesTheTokenAndTheAddress) {
  const cli::CommandTable& table = cli::CommandTable::instance();
  const cli::CommandSpec* ui = table.find({"ui"});
  ASSERT_NE(ui, nullptr);
  std::string help = table.commandHelp(*ui);
  for (const char* words : {"127.0.0.1", "?token=TOKEN", "32 random bytes", "--port N", "Ctrl-C", "in use"})
    EXPECT_NE(help.find(words), std::string::npos) << words << " not in:\n" << help;
  EXPECT_NE(table.mainHelp().find("ui "), std::string::npos);
}

}  // namespace
}  // namespace nk::ui
