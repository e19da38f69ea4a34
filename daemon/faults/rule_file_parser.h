#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "faults/fault_rule_base.h"

namespace nk {

// Reads the fault rule file (format in docs/fault-rules.md). Every error
// names the file and line: "rules.conf:7: unknown probe condition 'hott'
// (conditions: unreachable, reachable, ...)". A file with no rule is an
// error, since it would silence fault localisation.
class RuleFileParser {
 public:
  static Result<FaultRuleBase> parse(std::string_view text, std::string_view source_name);
  static Result<FaultRuleBase> load(const std::string& path);
  // The rule base shipped with nodekeeper (daemon/faults/default_fault_rules.conf).
  static const FaultRuleBase& builtIn();
  static std::string_view builtInText();
};

}  // namespace nk
