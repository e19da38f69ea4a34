#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nk::cli {

// The debug console's prompt on a terminal: history (up/down, kept in
// ~/.nodekeeper_debug_history) and Tab completion of command words, through
// libedit's readline interface when the CLI was built with it, else plain
// lines.
class LineEditor {
 public:
  LineEditor(std::string prompt, std::vector<std::string> words);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // The next line, or nullopt at end of input (Ctrl-D).
  std::optional<std::string> read();

 private:
  std::string prompt_;
  std::string history_path_;
};

}  // namespace nk::cli
