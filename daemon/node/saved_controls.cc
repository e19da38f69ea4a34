#include "saved_controls.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace nk {

Result<SavedControls> SavedControls::open(std::filesystem::path file) {
  if (!file.has_filename()) return invalidArgument("saved controls: '" + file.string() + "' names no file");
  std::filesystem::path parent = file.parent_path();
  auto dir = TrustedDirectory::open(parent.empty() ? std::filesystem::path(".") : parent);
  if (!dir) return Error{dir.error().code, "saved controls: " + dir.error().message};
  SavedControls saved(std::move(*dir), std::move(file));
  auto text = saved.dir_.readFile(saved.name_);
  if (!text) return Error{text.error().code, "saved controls: " + text.error().message};
  if (!*text) return saved;
  auto entries = parse(**text);
  if (!entries) return Error{entries.error().code, saved.file_.string() + ": " + entries.error().message};
  saved.entries_ = std::move(*entries);
  return saved;
}

std::string SavedControls::makeKey(std::string_view domain, uint32_t id, std::string_view file) {
  return std::string(domain) + ":" + std::to_string(id) + ":" + std::string(file);
}

std::optional<SavedControls::ControlKey> SavedControls::splitKey(std::string_view key) {
  size_t first = key.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  size_t second = key.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  ControlKey out;
  out.domain = std::string(key.substr(0, first));
  auto [ptr, ec] = std::from_chars(key.data() + first + 1, key.data() + second, out.id);
  if (ec != std::errc() || ptr != key.data() + second) return std::nullopt;
  out.file = std::string(key.substr(second + 1));
  return out;
}

bool SavedControls::contains(const std::string& key) const {
  for (const auto& entry : entries_)
    if (entry.key == key) return true;
  return false;
}

Status SavedControls::remember(const std::string& key, const std::string& original) {
  if (contains(key)) return {};
  entries_.push_back({key, original});
  Status written = persist();
  if (!written) entries_.pop_back();
  return written;
}

Status SavedControls::clear() {
  entries_.clear();
  return dir_.removeFile(name_);
}

Result<std::vector<SavedControls::Entry>> SavedControls::parse(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("controls") || !doc["controls"].is_array())
    return invalidArgument("not a saved-controls file (expected {\"controls\": [...]})");
  std::vector<Entry> entries;
  for (const auto& item : doc["controls"]) {
    if (!item.is_object() || !item.contains("key") || !item.contains("original") || !item["key"].is_string() ||
        !item["original"].is_string())
      return invalidArgument("malformed entry in saved controls");
    entries.push_back({item["key"].get<std::string>(), item["original"].get<std::string>()});
  }
  return entries;
}

std::string SavedControls::serialize(const std::vector<Entry>& entries) {
  nlohmann::json doc;
  doc["controls"] = nlohmann::json::array();
  for (const auto& entry : entries) doc["controls"].push_back({{"key", entry.key}, {"original", entry.original}});
  return doc.dump(2) + "\n";
}

Status SavedControls::persist() const {
  // Write-then-rename relative to the directory's descriptor, the
  // temporary file never through a link (TrustedDirectory::replaceFile).
  return dir_.replaceFile(name_, serialize(entries_), 0600);
}

}  // namespace nk
