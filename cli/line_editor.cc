#include "cli/line_editor.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#ifdef NK_HAVE_EDITLINE
#include <editline/readline.h>
#endif

namespace nk::cli {

namespace {

// readline's completion hook is a plain function: the words live here.
std::vector<std::string>& completionWords() {
  static std::vector<std::string> words;
  return words;
}

#ifdef NK_HAVE_EDITLINE
char* completionCandidate(const char* text, int state) {
  static size_t next = 0;
  if (state == 0) next = 0;
  const auto& words = completionWords();
  size_t length = std::strlen(text);
  while (next < words.size()) {
    const std::string& word = words[next++];
    if (word.compare(0, length, text) == 0) return strdup(word.c_str());
  }
  return nullptr;
}

char** complete(const char* text, int start, int) {
  if (start != 0) return nullptr;  // only the command word; arguments are ids and names
  return rl_completion_matches(text, completionCandidate);
}
#endif

}  // namespace

LineEditor::LineEditor(std::string prompt, std::vector<std::string> words) : prompt_(std::move(prompt)) {
  completionWords() = std::move(words);
  if (const char* home = std::getenv("HOME"); home && *home) history_path_ = std::string(home) + "/.nodekeeper_debug_history";
#ifdef NK_HAVE_EDITLINE
  rl_attempted_completion_function = complete;
  using_history();
  if (!history_path_.empty()) read_history(history_path_.c_str());
#endif
}

LineEditor::~LineEditor() {
#ifdef NK_HAVE_EDITLINE
  if (!history_path_.empty()) {
    stifle_history(1000);
    write_history(history_path_.c_str());
  }
#endif
}

std::optional<std::string> LineEditor::read() {
#ifdef NK_HAVE_EDITLINE
  char* line = readline(prompt_.c_str());
  if (!line) return std::nullopt;
  std::string text = line;
  std::free(line);
  if (!text.empty()) add_history(text.c_str());
  return text;
#else
  std::cout << prompt_ << std::flush;
  std::string text;
  if (!std::getline(std::cin, text)) return std::nullopt;
  return text;
#endif
}

}  // namespace nk::cli
