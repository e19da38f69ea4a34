#include "cli/table.h"

#include <algorithm>
#include <utility>

namespace nk::cli {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::addRow(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

size_t Table::displayWidth(std::string_view text) {
  size_t width = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;  // count code points, not continuation bytes
  return width;
}

std::string Table::render(std::string_view indent, bool with_header) const {
  std::vector<size_t> widths(columns_.size(), 0);
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = displayWidth(columns_[c].title);
    for (const auto& row : rows_) widths[c] = std::max(widths[c], displayWidth(row[c]));
  }

  auto line = [&](const std::vector<std::string>& cells) {
    std::string out(indent);
    for (size_t c = 0; c < columns_.size(); ++c) {
      size_t pad = widths[c] - displayWidth(cells[c]);
      if (c > 0) out += "  ";
      if (columns_[c].align == Align::kRight) out += std::string(pad, ' ') + cells[c];
      else out += cells[c] + std::string(pad, ' ');
    }
    while (out.size() > indent.size() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };

  std::vector<std::string> titles;
  for (const auto& column : columns_) titles.push_back(column.title);
  std::string out = with_header ? line(titles) : std::string();
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace nk::cli
