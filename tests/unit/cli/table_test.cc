#include "cli/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace nk::cli {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Table, AlignsColumnsLeftAndRight) {
  Table table({{"NAME"}, {"VALUE", Table::Align::kRight}});
  table.addRow({"a", "1"});
  table.addRow({"longer", "12345678"});
  EXPECT_EQ(table.render(),
            "NAME       VALUE\n"
            "a              1\n"
            "longer  12345678\n");
}

TEST(Table, CountsUtf8ByCodePoint) {
  EXPECT_EQ(Table::displayWidth("54.3 °C"), 7u);
  Table table({{"TEMP", Table::Align::kRight}, {"X"}});
  table.addRow({"54.3 °C", "a"});
  table.addRow({"-", "b"});
  auto rendered = lines(table.render());
  ASSERT_EQ(rendered.size(), 3u);
  // The X column starts at the same display column in every line.
  EXPECT_EQ(Table::displayWidth(rendered[1].substr(0, rendered[1].find('a'))),
            Table::displayWidth(rendered[2].substr(0, rendered[2].find('b'))));
}

TEST(Table, NoTrailingBlanksAndMissingCells) {
  Table table({{"A"}, {"B"}});
  table.addRow({"x"});
  for (const auto& line : lines(table.render())) {
    ASSERT_FALSE(line.empty());
    EXPECT_NE(line.back(), ' ');
  }
}

TEST(Table, WithoutHeaderAndIndent) {
  Table table({{"A"}, {"B"}});
  table.addRow({"key", "value"});
  EXPECT_EQ(table.render("  ", false), "  key  value\n");
}

}  // namespace
}  // namespace nk::cli
