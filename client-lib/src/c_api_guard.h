#pragma once

#include <cerrno>
#include <new>

namespace nk::client {

// The C ABI's rule: no exception leaves the library. Runs `f` (which
// returns 0 or a negative errno) and turns what it throws into an errno.
template <typename F>
int guarded(F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  } catch (...) {
    return -EIO;
  }
}

}  // namespace nk::client
