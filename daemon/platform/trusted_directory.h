#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace nk {

// A directory the daemon (root on a shared node) may read its own state
// back from and write into: it and every directory above it are owned by
// root or the daemon's user, none of them writable by others (above it, a
// sticky directory such as /tmp is fine: nobody else can rename what lies
// in it), and files in it are opened relative to its descriptor, never
// through a symlink. What another user could have planted is refused.
class TrustedDirectory {
 public:
  // Opens an existing directory and checks it and its ancestors.
  static Result<TrustedDirectory> open(const std::filesystem::path& path);
  // As open(), creating missing directories (mode 0755) on the way.
  static Result<TrustedDirectory> openOrCreate(const std::filesystem::path& path);

  ~TrustedDirectory();
  TrustedDirectory(TrustedDirectory&& other) noexcept;
  TrustedDirectory& operator=(TrustedDirectory&& other) noexcept;
  TrustedDirectory(const TrustedDirectory&) = delete;
  TrustedDirectory& operator=(const TrustedDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_; }

  // The whole of file `name` (one path component); nullopt when there is no
  // such file. A symlink, a non-regular file, or a file owned by another
  // user or writable by others is an error.
  Result<std::optional<std::string>> readFile(std::string_view name) const;
  // Replaces `name` with `contents` by write-then-rename: the temporary
  // file (name + ".tmp") is created afresh (O_EXCL|O_NOFOLLOW) after any
  // stale one is unlinked, fsynced, renamed over `name`, and the directory
  // fsynced: a crash leaves the old or the new contents, never a torn file.
  // `modified`, when given, is the new file's modification time, set before
  // it takes the name (for a reader that tells versions apart by it).
  Status replaceFile(std::string_view name, std::string_view contents, mode_t mode,
                     std::optional<timespec> modified = std::nullopt) const;
  // Unlinks `name` (a symlink itself, never its target); absent is fine.
  Status removeFile(std::string_view name) const;
  // A directory below this one, created (mode 0755) when `create` is set.
  Result<TrustedDirectory> subdirectory(std::string_view name, bool create) const;

  // Why `st` (of `path`) is not to be trusted, or nothing. `as_ancestor`:
  // a sticky directory may be writable by others.
  static Status checkOwnerAndMode(const struct stat& st, const std::filesystem::path& path, bool as_ancestor);
  // Every entry under this directory (not following symlinks) owned by root
  // or the daemon's user and, symlinks apart, not writable by others.
  Status checkTree() const;

 private:
  TrustedDirectory(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  static Result<TrustedDirectory> walk(const std::filesystem::path& path, bool create);
  Status checkName(std::string_view name) const;

  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace nk
