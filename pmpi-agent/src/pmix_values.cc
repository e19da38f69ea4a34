#include "pmix_values.h"

#include <charconv>

namespace nk::pmpi {

namespace {

// Versioned, so that a rank of another agent version is refused rather than
// misread. Fields are separated by '\n', which no field may hold.
constexpr std::string_view kMagic = "nk1";
constexpr char kSeparator = '\n';

bool fits(std::string_view field) {
  return field.size() <= PmixValues::kMaxField && field.find(kSeparator) == std::string_view::npos;
}

std::optional<uint32_t> number(std::string_view text) {
  uint32_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string PmixValues::encode(const PeerRecord& r) {
  // A field that cannot be carried is sent empty: the reader then refuses
  // the record, as it would a malformed one.
  auto field = [](const std::string& s) { return fits(s) ? s : std::string(); };
  std::string out(kMagic);
  for (const std::string& f : {field(r.job), std::to_string(r.world_rank), field(r.node), field(r.endpoint)}) {
    out += kSeparator;
    out += f;
  }
  return out;
}

std::optional<PmixValues::PeerRecord> PmixValues::decode(std::string_view text) {
  std::vector<std::string_view> fields;
  while (fields.size() < 6) {
    size_t at = text.find(kSeparator);
    fields.push_back(text.substr(0, at));
    if (at == std::string_view::npos) break;
    text.remove_prefix(at + 1);
  }
  if (fields.size() != 5 || fields[0] != kMagic) return std::nullopt;
  for (std::string_view f : fields)
    if (!fits(f)) return std::nullopt;
  if (fields[1].empty() || fields[3].empty()) return std::nullopt;
  auto rank = number(fields[2]);
  if (!rank) return std::nullopt;
  return PeerRecord{std::string(fields[1]), *rank, std::string(fields[3]), std::string(fields[4])};
}

std::optional<std::vector<uint32_t>> PmixValues::parseRankList(std::string_view text, size_t max_ranks) {
  std::vector<uint32_t> out;
  if (text.empty()) return out;
  while (true) {
    size_t at = text.find(',');
    auto rank = number(text.substr(0, at));
    if (!rank || out.size() >= max_ranks) return std::nullopt;
    out.push_back(*rank);
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

}  // namespace nk::pmpi
