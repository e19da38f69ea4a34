// libFuzzer target: the daemon's config parser must reject, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "daemon_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = nk::DaemonConfig::parse(text, "fuzz.toml");
  if (config.ok()) {
    nk::DaemonConfig base;
    base.overlay(*config);
  }
  return 0;
}
