#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nk {

// What a task program's function names may cost whoever keeps them: the
// daemon (root, for every user's sessions) and the CLI reading a recording.
// Names are the client's to send, one per function key, and a graph's
// window drops tasks, never names: without bounds a stream of made-up names
// (or one name per task, as a naive runtime might label them) would grow
// them for as long as the program runs. A real program names a few hundred
// functions, each in well under a kilobyte, demangled templates included.
class FunctionNameLimits {
 public:
  // Longer names are cut to this many bytes, "..." included.
  static constexpr size_t kMaxNameBytes = 4096;
  // Distinct names one graph or one stream keeps; the rest are counted
  // apart (TaskGraph) or left unnamed (TaskEventTranslator).
  static constexpr size_t kMaxNames = 65536;
  // The text of the names one stream keeps, all together.
  static constexpr size_t kMaxStreamNameBytes = size_t{4} << 20;

  // `name`, cut at a character's first byte to fit kMaxNameBytes, with
  // "..." at the end; as it is when it fits.
  static std::string_view fit(std::string_view name, std::string& scratch);
};

}  // namespace nk
