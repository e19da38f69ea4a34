#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace nk::test {

// The file's bytes; "" when it cannot be read.
std::string readFile(const std::filesystem::path& path);
// The file's text without trailing newlines and spaces.
std::string readTrimmed(const std::filesystem::path& path);
// Writes the way the daemon (and `echo >`) writes sysfs: O_TRUNC, one
// write(2), so a handler that reacts to each write sees the whole value.
bool writeControl(const std::filesystem::path& path, std::string_view text);

}  // namespace nk::test
