#pragma once

#include <string>
#include <string_view>

namespace nk {

// A name the user gave, set apart in a message: "no job 'ft-1'". An empty
// name then still shows as ''.
inline std::string singleQuoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace nk
