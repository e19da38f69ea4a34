#include "platform/cpu_pressure.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace nk {

CpuPressure::CpuPressure(std::filesystem::path root) : path_(std::move(root) / "proc/pressure/cpu") {}

std::optional<double> CpuPressure::someAvg10() const {
  std::ifstream in(path_);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse(text);
}

// "some avg10=1.23 avg60=0.50 avg300=0.10 total=12345\nfull avg10=..."
std::optional<double> CpuPressure::parse(std::string_view text) {
  size_t line = 0;
  while (line < text.size()) {
    size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(line, end - line);
    line = end + 1;
    if (!row.starts_with("some ")) continue;
    size_t at = row.find("avg10=");
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = row.substr(at + 6);
    std::string number(rest.substr(0, rest.find(' ')));
    char* parsed_end = nullptr;
    double value = std::strtod(number.c_str(), &parsed_end);
    if (parsed_end == number.c_str() || value < 0 || value > 100) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace nk
