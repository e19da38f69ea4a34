// libFuzzer target: NodeProfile::parse must turn any input into a profile or
// an error, never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "platform/emulated/node_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = nk::NodeProfile::parse(text, "fuzz.toml");
  if (profile.ok()) {
    // What parse() accepted must pass its own validation and be usable.
    if (!profile->validate().ok()) __builtin_trap();
    (void)profile->hwlocSynthetic();
    (void)profile->cores();
  } else if (profile.error().message.empty()) {
    __builtin_trap();  // errors must say something
  }
  return 0;
}
