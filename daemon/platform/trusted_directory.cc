#include "trusted_directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

namespace nk {

namespace {

namespace fs = std::filesystem;

// Symlinks followed in the directories above, as the kernel allows.
constexpr int kMaxSymlinks = 40;

std::string errnoText(int err) { return std::strerror(err); }

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

bool trustedOwner(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// The components of an absolute, normal path ("/a/b" -> a, b).
std::vector<std::string> componentsOf(const fs::path& path) {
  std::vector<std::string> parts;
  for (const auto& part : path.relative_path()) {
    if (part.empty() || part == ".") continue;
    parts.push_back(part.string());
  }
  return parts;
}

}  // namespace

Status TrustedDirectory::checkOwnerAndMode(const struct stat& st, const fs::path& path, bool as_ancestor) {
  if (!trustedOwner(st.st_uid))
    return permissionDenied(path.string() + " is owned by uid " + std::to_string(st.st_uid) +
                            ", not by root or the daemon's user (uid " + std::to_string(::geteuid()) + ")");
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  if (others_write && !(as_ancestor && sticky && S_ISDIR(st.st_mode)))
    return permissionDenied(path.string() + " is writable by other users (mode " + octal(st.st_mode) +
                            "); make it not group- or other-writable (chmod go-w)");
  return {};
}

Result<TrustedDirectory> TrustedDirectory::open(const fs::path& path) { return walk(path, false); }

Result<TrustedDirectory> TrustedDirectory::openOrCreate(const fs::path& path) { return walk(path, true); }

// Walks from "/" one component at a time with O_NOFOLLOW, checking each
// directory by its descriptor, so that nothing can be swapped between the
// check and the use. A symlink above the directory (/var/run -> /run) is
// followed only when it lies in a checked directory and is owned by root or
// the daemon's user; the directory itself must not be a symlink.
Result<TrustedDirectory> TrustedDirectory::walk(const fs::path& path, bool create) {
  if (path.empty()) return invalidArgument("empty directory path");
  std::error_code ec;
  fs::path wanted = fs::absolute(path, ec);
  if (ec) return invalidArgument(path.string() + ": " + ec.message());
  wanted = wanted.lexically_normal();
  for (int symlinks = 0;;) {
    std::vector<std::string> parts = componentsOf(wanted);
    Fd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return unavailable("/: " + errnoText(errno));
    fs::path walked = "/";
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0) return unavailable("/: " + errnoText(errno));
    if (Status s = checkOwnerAndMode(st, walked, !parts.empty()); !s) return s.error();
    bool restarted = false;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string& name = parts[i];
      const bool last = i + 1 == parts.size();
      fs::path here = walked / name;
      int fd = ::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && create) {
        if (::mkdirat(dir.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
          return unavailable("cannot create " + here.string() + ": " + errnoText(errno));
        fd = ::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (fd < 0) {
        int err = errno;
        struct stat link_st {};
        const bool is_link =
            ::fstatat(dir.get(), name.c_str(), &link_st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link_st.st_mode);
        if (!is_link) {
          if (err == ENOENT) return notFound(here.string() + " does not exist");
          if (err == ENOTDIR) return failedPrecondition(here.string() + " is not a directory");
          return unavailable(here.string() + ": " + errnoText(err));
        }
        if (last)
          return failedPrecondition(here.string() + " is a symlink; give the directory itself, not a link to it");
        if (!trustedOwner(link_st.st_uid))
          return permissionDenied(here.string() + " is a symlink owned by uid " + std::to_string(link_st.st_uid) +
                                  ", not by root or the daemon's user");
        if (++symlinks > kMaxSymlinks) return failedPrecondition(path.string() + ": too many symlinks");
        std::string target(PATH_MAX, '\0');
        ssize_t n = ::readlinkat(dir.get(), name.c_str(), target.data(), target.size());
        if (n < 0) return unavailable(here.string() + ": " + errnoText(errno));
        target.resize(static_cast<size_t>(n));
        fs::path rest;
        for (size_t j = i + 1; j < parts.size(); ++j) rest /= parts[j];
        fs::path resolved = fs::path(target).is_absolute() ? fs::path(target) : walked / target;
        wanted = (resolved / rest).lexically_normal();
        restarted = true;
        break;
      }
      dir.reset(fd);
      walked = here;
      if (::fstat(dir.get(), &st) != 0) return unavailable(here.string() + ": " + errnoText(errno));
      if (Status s = checkOwnerAndMode(st, here, !last); !s) return s.error();
    }
    if (!restarted) return TrustedDirectory(path, dir.release());
  }
}

TrustedDirectory::~TrustedDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

TrustedDirectory::TrustedDirectory(TrustedDirectory&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

TrustedDirectory& TrustedDirectory::operator=(TrustedDirectory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Status TrustedDirectory::checkName(std::string_view name) const {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos)
    return invalidArgument("'" + std::string(name) + "' is not a file name in " + path_.string());
  return {};
}

Result<std::optional<std::string>> TrustedDirectory::readFile(std::string_view name) const {
  if (Status s = checkName(name); !s) return s.error();
  const fs::path file = path_ / name;
  const std::string name_text(name);
  Fd fd(::openat(fd_, name_text.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    if (errno == ELOOP) return permissionDenied(file.string() + " is a symlink; refusing to follow it");
    return unavailable(file.string() + ": cannot read: " + errnoText(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return unavailable(file.string() + ": " + errnoText(errno));
  if (!S_ISREG(st.st_mode)) return failedPrecondition(file.string() + " is not a regular file");
  if (Status s = checkOwnerAndMode(st, file, false); !s) return s.error();
  std::string text;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable(file.string() + ": cannot read: " + errnoText(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return std::optional<std::string>(std::move(text));
}

Status TrustedDirectory::replaceFile(std::string_view name, std::string_view contents, mode_t mode,
                                     std::optional<timespec> modified) const {
  if (Status s = checkName(name); !s) return s;
  const std::string target(name);
  const std::string temp = target + ".tmp";
  const fs::path temp_path = path_ / temp;
  // A stale temporary file (a crash mid-write) or anything planted there
  // goes; unlinking a symlink never touches what it points to.
  if (::unlinkat(fd_, temp.c_str(), 0) != 0 && errno != ENOENT)
    return unavailable(temp_path.string() + ": cannot remove the old temporary file: " + errnoText(errno));
  Fd fd(::openat(fd_, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.get() < 0) return unavailable(temp_path.string() + ": " + errnoText(errno));
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd.get(), data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable(temp_path.string() + ": " + errnoText(errno));
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (modified) {
    const timespec times[2] = {*modified, *modified};
    if (::futimens(fd.get(), times) != 0) return unavailable(temp_path.string() + ": futimens: " + errnoText(errno));
  }
  if (::fsync(fd.get()) != 0) return unavailable(temp_path.string() + ": fsync: " + errnoText(errno));
  fd.reset(-1);
  if (::renameat(fd_, temp.c_str(), fd_, target.c_str()) != 0)
    return unavailable((path_ / target).string() + ": rename: " + errnoText(errno));
  ::fsync(fd_);
  return {};
}

Status TrustedDirectory::removeFile(std::string_view name) const {
  if (Status s = checkName(name); !s) return s;
  const std::string target(name);
  if (::unlinkat(fd_, target.c_str(), 0) != 0 && errno != ENOENT)
    return unavailable((path_ / target).string() + ": cannot remove: " + errnoText(errno));
  return {};
}

Result<TrustedDirectory> TrustedDirectory::subdirectory(std::string_view name, bool create) const {
  if (Status s = checkName(name); !s) return s.error();
  const std::string child(name);
  const fs::path child_path = path_ / child;
  int fd = ::openat(fd_, child.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(fd_, child.c_str(), 0755) != 0 && errno != EEXIST)
      return unavailable("cannot create " + child_path.string() + ": " + errnoText(errno));
    fd = ::openat(fd_, child.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) {
    if (errno == ENOENT) return notFound(child_path.string() + " does not exist");
    if (errno == ELOOP || errno == ENOTDIR)
      return failedPrecondition(child_path.string() + " is not a directory (or is a symlink to one)");
    return unavailable(child_path.string() + ": " + errnoText(errno));
  }
  TrustedDirectory opened(child_path, fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return unavailable(child_path.string() + ": " + errnoText(errno));
  if (Status s = checkOwnerAndMode(st, child_path, false); !s) return s.error();
  return opened;
}

namespace {

// Depth-first over `dir_fd` (named `dir_path`), entries by lstat.
Status checkEntries(int dir_fd, const fs::path& dir_path, int depth) {
  if (depth > 64) return failedPrecondition(dir_path.string() + ": directory tree too deep");
  int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return unavailable(dir_path.string() + ": " + std::strerror(errno));
  DIR* stream = ::fdopendir(copy);
  if (!stream) {
    ::close(copy);
    return unavailable(dir_path.string() + ": " + std::strerror(errno));
  }
  Status result;
  while (dirent* entry = ::readdir(stream)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    const fs::path entry_path = dir_path / name;
    struct stat st {};
    if (::fstatat(dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      result = unavailable(entry_path.string() + ": " + std::strerror(errno));
      break;
    }
    if (S_ISLNK(st.st_mode)) {
      // A link's own mode means nothing; who made it does.
      if (!trustedOwner(st.st_uid)) {
        result = permissionDenied(entry_path.string() + " is a symlink owned by uid " + std::to_string(st.st_uid) +
                                  ", not by root or the daemon's user");
        break;
      }
      continue;
    }
    if (Status s = TrustedDirectory::checkOwnerAndMode(st, entry_path, false); !s) {
      result = s;
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      int child = ::openat(dir_fd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) {
        result = unavailable(entry_path.string() + ": " + std::strerror(errno));
        break;
      }
      Status s = checkEntries(child, entry_path, depth + 1);
      ::close(child);
      if (!s) {
        result = s;
        break;
      }
    }
  }
  ::closedir(stream);
  return result;
}

}  // namespace

Status TrustedDirectory::checkTree() const { return checkEntries(fd_, path_, 0); }

}  // namespace nk
