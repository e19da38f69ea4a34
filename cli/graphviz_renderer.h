#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace nk::cli {

// Renders DOT text to SVG with Graphviz's `dot` program (package graphviz),
// found on PATH: the CLI stays free of libgvc, and `dot` is what users
// already have for this.
class GraphvizRenderer {
 public:
  static Result<std::string> toSvg(std::string_view dot);
};

}  // namespace nk::cli
