#pragma once

namespace nk::client {

// The OpenMP runtime functions the library calls, found at run time so the
// library neither links an OpenMP runtime nor drags one into a program.
class OmpRuntime {
 public:
  using SetNumThreads = void (*)(int);
  using GetMaxThreads = int (*)();

  [[nodiscard]] static SetNumThreads setNumThreads();
  [[nodiscard]] static GetMaxThreads getMaxThreads();
};

}  // namespace nk::client
