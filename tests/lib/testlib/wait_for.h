#pragma once

#include <chrono>
#include <functional>

namespace nk::test {

// Polls `done` every 5 ms until it holds or `timeout` passes; returns
// whether it held (checked once more at the deadline).
bool waitFor(const std::function<bool()>& done, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

}  // namespace nk::test
