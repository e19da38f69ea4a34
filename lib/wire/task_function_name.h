#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nk::wire {

// The names libnodekeeper gives task constructs (client-lib's
// CodeSymbolizer), as the daemon matches them against what a user types:
// "fib (fib.c:31)" for a construct named by its line, "fib+0x1f" by its
// offset, "prog+0x1234" for a stripped module.
class TaskFunctionName {
 public:
  // The part a user types for a whole function: "fib" of "fib (fib.c:31)"
  // and of "fib+0x1f"; a name of neither form whole.
  static std::string_view bareFunction(std::string_view name);
  // `name` cut to at most `max_bytes` (at least 4), at a character's first
  // byte, ending in "..."; as it is when it fits. Both the library, which
  // fits names into a message, and whoever keeps them cut them so.
  static void cutToFit(std::string& name, size_t max_bytes);
};

}  // namespace nk::wire
