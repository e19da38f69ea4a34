#include "metrics/metrics_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace nk {
namespace {

TEST(MetricsWriterTest, FamilyHasHelpAndTypeThenSamples) {
  MetricsWriter out;
  out.family("nodekeeper_x_total", MetricsWriter::Type::kCounter, "Things counted.");
  out.sample("nodekeeper_x_total", {{"kind", "a"}}, 3);
  out.sample("nodekeeper_x_total", 4);
  EXPECT_EQ(out.text(),
            "# HELP nodekeeper_x_total Things counted.\n"
            "# TYPE nodekeeper_x_total counter\n"
            "nodekeeper_x_total{kind=\"a\"} 3\n"
            "nodekeeper_x_total 4\n");
}

TEST(MetricsWriterTest, TypesAreNamedAsTheFormatNamesThem) {
  MetricsWriter out;
  out.family("a", MetricsWriter::Type::kGauge, "g");
  out.family("b", MetricsWriter::Type::kHistogram, "h");
  EXPECT_NE(out.text().find("# TYPE a gauge\n"), std::string::npos);
  EXPECT_NE(out.text().find("# TYPE b histogram\n"), std::string::npos);
}

TEST(MetricsWriterTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  MetricsWriter out;
  out.sample("m", {{"program", "a\\b\"c\nd"}, {"pid", "7"}}, 1);
  EXPECT_EQ(out.text(), "m{program=\"a\\\\b\\\"c\\nd\",pid=\"7\"} 1\n");
}

TEST(MetricsWriterTest, HelpEscapesBackslashAndNewlineOnly) {
  MetricsWriter out;
  out.family("m", MetricsWriter::Type::kGauge, "a \"quoted\" \\ line\nnext");
  EXPECT_EQ(out.text(), "# HELP m a \"quoted\" \\\\ line\\nnext\n# TYPE m gauge\n");
}

TEST(MetricsWriterTest, LabelValuesThatAreNotUtf8AreMended) {
  std::string value;
  MetricsWriter::appendLabelValue(value, "ok \xc3\xa9 \xff end \xe2\x82");  // é kept, a stray byte and a cut euro sign
  EXPECT_EQ(value, "ok \xc3\xa9 \xef\xbf\xbd end \xef\xbf\xbd\xef\xbf\xbd");
  value.clear();
  MetricsWriter::appendLabelValue(value, "\xed\xa0\x80");  // a surrogate is no UTF-8
  EXPECT_EQ(value, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  value.clear();
  MetricsWriter::appendLabelValue(value, "\xf0\x9f\x94\x8b");  // a battery, four bytes
  EXPECT_EQ(value, "\xf0\x9f\x94\x8b");
}

TEST(MetricsWriterTest, ValuesAsGoReadsThem) {
  auto text = [](double v) {
    std::string s;
    MetricsWriter::appendValue(s, v);
    return s;
  };
  EXPECT_EQ(text(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(text(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(text(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(text(0), "0");
  EXPECT_EQ(text(2400000000.0), "2400000000");
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(-12.5), "-12.5");
  EXPECT_EQ(text(0.0005), "0.0005");
  EXPECT_EQ(text(1e-7), "1e-07");
  EXPECT_EQ(text(1e300), "1e+300");
  EXPECT_EQ(std::stod(text(1.0 / 3)), 1.0 / 3);  // shortest text that is the same double  // shortest text that is the same double
}

}  // namespace
}  // namespace nk
