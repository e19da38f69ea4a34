#include "metrics/metrics_writer.h"

#include <charconv>
#include <cmath>

namespace nk {

namespace {

std::string_view typeName(MetricsWriter::Type type) {
  switch (type) {
    case MetricsWriter::Type::kCounter:
      return "counter";
    case MetricsWriter::Type::kGauge:
      return "gauge";
    case MetricsWriter::Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// The length of the UTF-8 sequence starting at `at`, or 0 if it is not a
// well-formed one (overlong forms, surrogates and values past U+10FFFF are not).
size_t utf8SequenceLength(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the second byte's range
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xbf) return 0;
  return length;
}

}  // namespace

void MetricsWriter::family(std::string_view name, Type type, std::string_view help) {
  out_.append("# HELP ").append(name).append(" ");
  // HELP escapes only backslash and newline.
  for (char c : help) {
    if (c == '\\') out_.append("\\\\");
    else if (c == '\n') out_.append("\\n");
    else out_ += c;
  }
  out_.append("\n# TYPE ").append(name).append(" ").append(typeName(type)).append("\n");
}

void MetricsWriter::sample(std::string_view name, std::span<const Label> labels, double value) {
  out_.append(name);
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const Label& label : labels) {
      if (!first) out_ += ',';
      first = false;
      out_.append(label.name).append("=\"");
      appendLabelValue(out_, label.value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  appendValue(out_, value);
  out_ += '\n';
}

void MetricsWriter::appendLabelValue(std::string& out, std::string_view value) {
  size_t at = 0;
  while (at < value.size()) {
    const char c = value[at];
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '"') {
      out.append("\\\"");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      size_t length = utf8SequenceLength(value, at);
      if (length == 0) {
        out.append("\xef\xbf\xbd");  // U+FFFD for the one byte
        length = 1;
      } else {
        out.append(value.substr(at, length));
      }
      at += length;
      continue;
    }
    ++at;
  }
}

void MetricsWriter::appendValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out.append("NaN");
  } else if (std::isinf(value)) {
    out.append(value > 0 ? "+Inf" : "-Inf");
  } else {
    // Plain decimals where they stay short (2400000000, not 2.4e+09: a
    // person reads the page too), the shortest form elsewhere.
    char buffer[64];
    const double magnitude = std::fabs(value);
    const bool plain = magnitude == 0 || (magnitude >= 1e-4 && magnitude < 1e15);
    auto [end, ec] = plain ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
                           : std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, ec == std::errc() ? end : buffer);
  }
}

}  // namespace nk
