#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nk::cli {

// A plain-text table with a header row and columns aligned by display width
// (UTF-8 aware, so "°C" counts as two columns, not three).
class Table {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string title;
    Align align = Align::kLeft;
  };

  explicit Table(std::vector<Column> columns);

  // Missing cells are blank; extra cells are ignored.
  void addRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  // Columns are separated by two spaces; lines have no trailing blanks.
  std::string render(std::string_view indent = "", bool with_header = true) const;

  static size_t displayWidth(std::string_view text);

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace nk::cli
