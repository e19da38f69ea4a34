#include "saved_controls.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace nk {

Result<SavedControls> SavedControls::open(std::filesystem::path file) {
  SavedControls saved(std::move(file));
  std::error_code ec;
  if (!std::filesystem::exists(saved.file_, ec)) return saved;
  std::ifstream in(saved.file_);
  if (!in) return unavailable(saved.file_.string() + ": cannot read: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  auto entries = parse(text.str());
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
  std::error_code ec;
  std::filesystem::remove(file_, ec);
  if (ec) return unavailable(file_.string() + ": cannot remove: " + ec.message());
  return {};
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
  // Write-then-rename, with fsync of both the file and its directory: a crash
  // at any point leaves either the old or the new list, never a torn one.
  std::filesystem::path tmp = file_;
  tmp += ".tmp";
  std::string text = serialize(entries_);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return unavailable(tmp.string() + ": " + std::strerror(errno));
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return unavailable(tmp.string() + ": " + std::strerror(err));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return unavailable(tmp.string() + ": fsync: " + std::strerror(err));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), file_.c_str()) != 0)
    return unavailable(file_.string() + ": rename: " + std::strerror(errno));
  int dir = ::open(file_.parent_path().empty() ? "." : file_.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

}  // namespace nk
