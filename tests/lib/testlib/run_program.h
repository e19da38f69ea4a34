#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace nk::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a program (argv[0] looked up in PATH) to completion, capturing its
// output; killed after `timeout`. With `as_uid`, drops to that uid/gid
// (and no supplementary groups) first; needs root.
ProcessResult runProgram(const std::vector<std::string>& argv, std::optional<uid_t> as_uid = std::nullopt,
                         std::chrono::seconds timeout = std::chrono::seconds(30));

}  // namespace nk::test
