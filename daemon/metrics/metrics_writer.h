#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace nk {

// Prometheus' text exposition format 0.0.4, written into one string: a
// family's HELP and TYPE lines, then its samples. Label values and help
// texts are escaped here, and label values that are not UTF-8 (a program's
// name is whatever its user made it) are mended, so no input can break the
// page a scraper parses. Metric and label names are the caller's constants.
class MetricsWriter {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  struct Label {
    std::string_view name;
    std::string_view value;
  };

  // The Content-Type a scraper expects with this text.
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  // HELP and TYPE of the family `name`; its samples follow. A counter's
  // name ends in _total.
  void family(std::string_view name, Type type, std::string_view help);
  // One sample: `name` is the family's, or for a histogram the family's
  // with _bucket, _sum or _count.
  void sample(std::string_view name, std::span<const Label> labels, double value);
  void sample(std::string_view name, std::initializer_list<Label> labels, double value) {
    sample(name, std::span<const Label>(labels.begin(), labels.size()), value);
  }
  void sample(std::string_view name, double value) { sample(name, std::span<const Label>(), value); }

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }
  void reserve(size_t bytes) { out_.reserve(bytes); }

  // A label value as it goes between the quotes: \ " and newline escaped,
  // bytes that are not UTF-8 replaced by U+FFFD.
  static void appendLabelValue(std::string& out, std::string_view value);
  // Go's ParseFloat reads these back: NaN, +Inf, -Inf, and the shortest
  // decimal that is the double.
  static void appendValue(std::string& out, double value);

 private:
  std::string out_;
};

}  // namespace nk
