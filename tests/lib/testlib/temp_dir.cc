#include "testlib/temp_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <system_error>
#include <vector>

namespace nk::test {

namespace {

std::filesystem::path baseFor(TempDir::Access access) {
  if (access == TempDir::Access::kShared) return "/tmp";
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  return ec ? std::filesystem::path("/tmp") : base;
}

}  // namespace

TempDir::TempDir(std::string_view tag, Access access) {
  std::string pattern = (baseFor(access) / ("nk-" + std::string(tag) + "-XXXXXX")).string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  path_ = buffer.data();
  if (access == Access::kShared && ::chmod(path_.c_str(), 0755) != 0)
    throw std::system_error(errno, std::generic_category(), "chmod 0755 " + path_.string());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::writeFile(const std::filesystem::path& relative, std::string_view text) const {
  std::filesystem::path file = path_ / relative;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
  return file;
}

}  // namespace nk::test
