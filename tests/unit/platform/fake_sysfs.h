#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "testlib/temp_dir.h"

namespace nk::test {

// A throw-away directory tree standing in for / (sys, proc), removed with
// the object. Failures to build it are test failures, not silent skips.
class FakeSysfs {
 public:
  FakeSysfs() = default;
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  const std::filesystem::path& root() const { return dir_.path(); }
  std::filesystem::path path(const std::string& relative) const { return dir_ / relative; }

  // Creates the parent directories; overwrites an existing file.
  void write(const std::string& relative, const std::string& content) const {
    std::filesystem::path file = path(relative);
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::trunc | std::ios::binary);
    out << content;
    ASSERT_TRUE(out.good()) << "writing " << file;
  }

  std::string read(const std::string& relative) const {
    std::ifstream in(path(relative), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  void mkdir(const std::string& relative) const { std::filesystem::create_directories(path(relative)); }

  void remove(const std::string& relative) const { std::filesystem::remove(path(relative)); }

  // `target` is stored as given, so relative targets resolve the way the
  // kernel's sysfs links do.
  void symlink(const std::string& target, const std::string& relative_link) const {
    std::filesystem::path link = path(relative_link);
    std::filesystem::create_directories(link.parent_path());
    std::filesystem::create_directory_symlink(target, link);
  }

 private:
  // Shared (0755): an unprivileged child (runUnprivileged) must get as far
  // as the file whose permissions are under test.
  TempDir dir_{"fake-sysfs", TempDir::Access::kShared};
};

// Root reads files of any mode, so permission checks run in a child (inside
// EXPECT_EXIT) that first gives up root; the child's exit code is the
// verdict, since assertions made there never reach the parent.
template <typename Check>
[[noreturn]] void runUnprivileged(Check check) {
  if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
  ::_exit(check() ? 0 : 1);
}

}  // namespace nk::test
