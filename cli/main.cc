#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/command_runner.h"
#include "cli/ui/ui_command.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto invocation = nk::cli::CommandLine::parse(args);
  if (!invocation) {
    std::cerr << "nodekeeper: " << invocation.error().message << "\n";
    return 1;
  }
  nk::cli::CommandRunner runner(std::cout, std::cerr, ::isatty(STDOUT_FILENO) == 1, nk::ui::UiCommand::run);
  return runner.run(*invocation);
}
