#include "faults/rule_file_parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

namespace nk {

namespace {

// Keep identical to daemon/faults/default_fault_rules.conf (the unit test
// compares them): the daemon must localise faults even where the file was
// never installed.
constexpr std::string_view kBuiltInRules =
    R"rules(# nodekeeper's built-in fault rules: what TFA, the fault analysis at a node's
# fault localisation node (FLN), reasons with unless nodekeeperd runs with
# --fault-rules FILE (config key fault_rules). To change them, copy this file,
# edit the copy, point the daemon at it and send the daemon SIGHUP; a file
# with an error is refused and the rules in use stay. Format:
# docs/fault-rules.md.
#
# nodekeeperd carries this text compiled in (daemon/faults/rule_file_parser.cc),
# so a node without the file still localises faults; a unit test fails when
# the two differ.

# Symptoms about one node closer together than this are one group, one
# fault. The ranks of one collective report a laggard within a few agent
# deadlines of each other; two seconds holds those together without merging
# faults that are really separate.
set window 2s

# One response timeout alone is often a peer that is merely slow; a second
# distinct symptom about the same node within the window is worth probing.
set trigger_count 2

# These are never noise, so one is enough and waiting would only delay the
# report: a daemon that stopped heartbeating, a rank that ended without
# MPI_Finalize, a sensor past its alarm temperature.
set trigger_now heartbeat_lost rank_exited thermal_alarm

# The PMPI agent reports progress every 200 ms by default
# (NODEKEEPER_PMPI_HEARTBEAT_MS), so two seconds of silence is ten missed
# reports: a rank that hangs, not one that is busy.
set stall_after 2s

# Round trips between daemons on a cluster network take a few milliseconds
# at most; 250 ms means congestion or a failing link, yet leaves room for a
# loaded node whose daemon answers late.
set slow_rtt 250ms

# One lost datagram must not declare a node down; three silent attempts in a
# row do.
set probe_attempts 3

# Rules are hypotheses tried in this order; the first one the probes confirm
# is the group's fault, the rest are not probed.

# First: a node whose daemon does not answer explains every other symptom
# about it (its ranks stop answering, error out, stop heartbeating), and the
# status and log probes could not reach it anyway.
rule node_down        when heartbeat_lost response_timeout mpi_error rank_exited  confirm unreachable

# The node answers but a suspect rank's process is gone without MPI_Finalize:
# its peers time out or see errors on the connection to it.
rule process_crash    when rank_exited response_timeout mpi_error heartbeat_lost   confirm reachable rank_gone

# The process is there but makes no progress: stopped (SIGSTOP, a tracer)...
rule process_hang     when heartbeat_lost response_timeout                         confirm reachable rank_stopped
# ...or running but silent for stall_after (a deadlock, an endless loop).
rule process_hang     when heartbeat_lost response_timeout                         confirm reachable rank_stalled

# Every rank is fine, yet the node answers slowly and messages to or from the
# suspects did not complete: the network between them is at fault. Tried
# after the process rules, since a hung rank also leaves messages pending.
rule network_degraded when response_timeout mpi_error                              confirm slow ranks_healthy log_pending

# A thermal alarm is only a fault when the node's own sensors confirm it; an
# alarm relayed late about a node that has cooled down is not reported.
rule overheating      when thermal_alarm                                           confirm reachable hot
)rules";

// Generous for any hand-written rule file, small enough that a wrong path
// (a core dump, a log) is refused before it is held in memory.
constexpr size_t kMaxFileBytes = size_t{1} << 20;
constexpr size_t kMaxLineBytes = 4096;
// Durations longer than this have no use in fault localisation, and the
// bound keeps the arithmetic far from overflow.
constexpr std::chrono::milliseconds kMaxDuration = std::chrono::hours(1);
constexpr int64_t kMaxTriggerCount = 1000000;
// Each attempt waits for an answer before the next, so many attempts only
// delay a node_down report.
constexpr int64_t kMaxProbeAttempts = 10;

constexpr std::array<ProbeCondition, 9> kAllConditions{
    ProbeCondition::kUnreachable, ProbeCondition::kReachable,    ProbeCondition::kSlow,
    ProbeCondition::kRankGone,    ProbeCondition::kRankStopped,  ProbeCondition::kRankStalled,
    ProbeCondition::kRanksHealthy, ProbeCondition::kHot,         ProbeCondition::kLogPending,
};
constexpr std::array<SymptomKind, 6> kAllSymptomKinds{
    SymptomKind::kResponseTimeout, SymptomKind::kMpiError,   SymptomKind::kHeartbeatLost,
    SymptomKind::kThermalAlarm,    SymptomKind::kPowerAlarm, SymptomKind::kRankExited,
};
constexpr std::array<FaultKind, 5> kAllFaultKinds{
    FaultKind::kNodeDown,        FaultKind::kProcessHang, FaultKind::kProcessCrash,
    FaultKind::kNetworkDegraded, FaultKind::kOverheating,
};

enum class Setting { kWindow, kTriggerCount, kTriggerNow, kStallAfter, kSlowRtt, kProbeAttempts };
constexpr std::array<std::pair<Setting, std::string_view>, 6> kSettings{{
    {Setting::kWindow, "window"},
    {Setting::kTriggerCount, "trigger_count"},
    {Setting::kTriggerNow, "trigger_now"},
    {Setting::kStallAfter, "stall_after"},
    {Setting::kSlowRtt, "slow_rtt"},
    {Setting::kProbeAttempts, "probe_attempts"},
}};

// The word lists of error messages come from the same tables the parser
// accepts, so they cannot fall behind a new kind.
template <typename Range, typename Name>
std::string joinNames(const Range& range, Name name) {
  std::string out;
  for (const auto& item : range) {
    if (!out.empty()) out += ", ";
    out += name(item);
  }
  return out;
}

std::string conditionWords() { return joinNames(kAllConditions, probeConditionName); }
std::string symptomKindWords() { return joinNames(kAllSymptomKinds, symptomKindName); }
std::string faultKindWords() { return joinNames(kAllFaultKinds, faultKindName); }
std::string settingWords() {
  return joinNames(kSettings, [](const auto& setting) { return setting.second; });
}

// Control bytes escaped: a binary file given by mistake must not garble the
// daemon's log with its error message.
std::string quoted(std::string_view token) {
  std::string out = "'";
  for (unsigned char c : token) {
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

bool isDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> tokensOf(std::string_view line) {
  if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isBlank(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !isBlank(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

std::optional<SymptomKind> parseSymptomKind(std::string_view word) {
  for (SymptomKind kind : kAllSymptomKinds)
    if (symptomKindName(kind) == word) return kind;
  return std::nullopt;
}

std::optional<ProbeCondition> parseProbeCondition(std::string_view word) {
  for (ProbeCondition condition : kAllConditions)
    if (probeConditionName(condition) == word) return condition;
  return std::nullopt;
}

bool needsStatusOrLogProbe(ProbeCondition condition) {
  switch (condition) {
    case ProbeCondition::kRankGone:
    case ProbeCondition::kRankStopped:
    case ProbeCondition::kRankStalled:
    case ProbeCondition::kRanksHealthy:
    case ProbeCondition::kHot:
    case ProbeCondition::kLogPending: return true;
    case ProbeCondition::kUnreachable:
    case ProbeCondition::kReachable:
    case ProbeCondition::kSlow: break;
  }
  return false;
}

// Why `a` and `b` can never hold together, if so: such a rule could never
// be confirmed, which is surely not what its author meant.
std::optional<std::string> contradiction(ProbeCondition a, ProbeCondition b) {
  auto is = [&](ProbeCondition x, ProbeCondition y) { return (a == x && b == y) || (a == y && b == x); };
  if (is(ProbeCondition::kReachable, ProbeCondition::kUnreachable))
    return std::string("a node's daemon either answers the response probe or not");
  if (is(ProbeCondition::kSlow, ProbeCondition::kUnreachable))
    return std::string("slow means the node's daemon answered, if late");
  if (a == ProbeCondition::kUnreachable || b == ProbeCondition::kUnreachable) {
    ProbeCondition other = a == ProbeCondition::kUnreachable ? b : a;
    if (needsStatusOrLogProbe(other))
      return std::string("an unreachable node cannot answer a ") +
             (other == ProbeCondition::kLogPending ? "log" : "status") + " probe";
  }
  for (ProbeCondition unhealthy :
       {ProbeCondition::kRankGone, ProbeCondition::kRankStopped, ProbeCondition::kRankStalled})
    if (is(ProbeCondition::kRanksHealthy, unhealthy))
      return std::string("ranks_healthy means every rank there runs and reports");
  return std::nullopt;
}

// A duration token's value; the message lacks the location, which the
// caller adds.
Result<std::chrono::milliseconds> parseDuration(std::string_view token, std::string_view setting) {
  auto notDuration = [&] { return invalidArgument(quoted(token) + " is not a duration (use 500ms or 2s)"); };
  bool negative = !token.empty() && token.front() == '-';
  std::string_view body = negative ? token.substr(1) : token;
  std::string_view whole;
  std::string_view fraction;
  int64_t unit_ms = 1;
  if (body.size() > 2 && body.ends_with("ms")) {
    whole = body.substr(0, body.size() - 2);
  } else if (body.size() > 1 && body.ends_with("s")) {
    std::string_view number = body.substr(0, body.size() - 1);
    size_t dot = number.find('.');
    whole = number.substr(0, dot);
    if (dot != std::string_view::npos) {
      fraction = number.substr(dot + 1);
      if (!isDigits(fraction)) return notDuration();
    }
    unit_ms = 1000;
  } else {
    return notDuration();
  }
  if (!isDigits(whole)) return notDuration();
  if (negative) return invalidArgument(std::string(setting) + " must be greater than 0, not " + quoted(token));
  // Milliseconds are the resolution of every setting; a finer duration
  // would be silently cut, so it is refused.
  if (fraction.size() > 3) {
    if (fraction.find_first_not_of('0', 3) != std::string_view::npos)
      return invalidArgument(quoted(token) + " is finer than a millisecond");
    fraction = fraction.substr(0, 3);
  }
  auto tooLong = [&] {
    return invalidArgument(std::string(setting) + " must be at most " + std::to_string(kMaxDuration.count() / 1000) +
                           "s, not " + quoted(token));
  };
  whole.remove_prefix(std::min(whole.find_first_not_of('0'), whole.size() - 1));
  if (whole.size() > 10) return tooLong();
  int64_t value = 0;
  std::from_chars(whole.data(), whole.data() + whole.size(), value);
  value *= unit_ms;
  if (!fraction.empty()) {
    int64_t millis = 0;
    std::from_chars(fraction.data(), fraction.data() + fraction.size(), millis);
    for (size_t digits = fraction.size(); digits < 3; ++digits) millis *= 10;
    value += millis;
  }
  if (value == 0)
    return invalidArgument(std::string(setting) + " must be greater than 0, not " + quoted(token));
  if (value > kMaxDuration.count()) return tooLong();
  return std::chrono::milliseconds(value);
}

Result<size_t> parseCount(std::string_view token, std::string_view setting, int64_t low, int64_t high) {
  auto outOfRange = [&] {
    return invalidArgument(std::string(setting) + " must be between " + std::to_string(low) + " and " +
                           std::to_string(high) + ", not " + std::string(token));
  };
  bool negative = !token.empty() && token.front() == '-';
  std::string_view digits = negative ? token.substr(1) : token;
  if (!isDigits(digits)) return invalidArgument(quoted(token) + " is not an integer (" + std::string(setting) +
                                                " takes a whole number from " + std::to_string(low) + " to " +
                                                std::to_string(high) + ")");
  int64_t value = 0;
  bool parsed = std::from_chars(digits.data(), digits.data() + digits.size(), value).ec == std::errc();
  if (!parsed || negative || value < low || value > high) return outOfRange();
  return static_cast<size_t>(value);
}

Error tooLarge(std::string_view source, uint64_t bytes) {
  return invalidArgument(std::string(source) + ": " + std::to_string(bytes) +
                         " bytes, over the 1 MiB limit of a rule file (is it the right file?)");
}

class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source) { rule_base_.source = std::string(source); }

  Result<FaultRuleBase> run(std::string_view text) {
    if (text.size() > kMaxFileBytes) return tooLarge(source_, text.size());
    size_t start = 0;
    while (start < text.size()) {
      ++line_;
      size_t newline = text.find('\n', start);
      size_t end = newline == std::string_view::npos ? text.size() : newline;
      std::string_view line = text.substr(start, end - start);
      start = end + 1;
      if (line.size() > kMaxLineBytes)
        return errorHere("line of " + std::to_string(line.size()) + " bytes, over the limit of " +
                         std::to_string(kMaxLineBytes));
      if (Status status = parseLine(tokensOf(line)); !status) return status.error();
    }
    if (rule_base_.rules.empty())
      return invalidArgument(source_ + ": no rule: fault localisation would never report a fault");
    return std::move(rule_base_);
  }

 private:
  using Tokens = std::vector<std::string_view>;

  Error errorHere(const std::string& what) const {
    return invalidArgument(source_ + ":" + std::to_string(line_) + ": " + what);
  }

  Status parseLine(const Tokens& tokens) {
    if (tokens.empty()) return {};
    if (tokens[0] == "set") return parseSet(tokens);
    if (tokens[0] == "rule") return parseRule(tokens);
    return errorHere("unknown directive " + quoted(tokens[0]) + " (directives: set, rule)");
  }

  Status parseSet(const Tokens& tokens) {
    if (tokens.size() < 2) return errorHere("'set' needs a setting and its value (settings: " + settingWords() + ")");
    auto known = std::find_if(kSettings.begin(), kSettings.end(),
                              [&](const auto& setting) { return setting.second == tokens[1]; });
    if (known == kSettings.end())
      return errorHere("unknown setting " + quoted(tokens[1]) + " (settings: " + settingWords() + ")");
    // Named, not structured bindings: clang 14 (the sanitizer build) cannot
    // capture those in the lambdas below.
    const auto setting = known->first;
    const auto name = known->second;
    // Two values for one setting are a merge gone wrong more often than
    // an override, so the second is refused rather than winning.
    auto [first, inserted] = set_on_line_.emplace(setting, line_);
    if (!inserted)
      return errorHere("duplicate setting '" + std::string(name) + "' (first set on line " +
                       std::to_string(first->second) + ")");
    std::string directive = "'set " + std::string(name) + "'";
    if (tokens.size() < 3) return errorHere(directive + " needs " + valueDescription(setting));
    if (setting == Setting::kTriggerNow) return parseTriggerNow(tokens);
    std::string_view value = tokens[2];
    auto takeDuration = [&](std::chrono::milliseconds& field) -> Status {
      auto duration = parseDuration(value, name);
      if (!duration) return errorHere(duration.error().message);
      field = *duration;
      return {};
    };
    auto takeCount = [&](size_t& field, int64_t high) -> Status {
      auto count = parseCount(value, name, 1, high);
      if (!count) return errorHere(count.error().message);
      field = *count;
      return {};
    };
    Status taken;
    switch (setting) {
      case Setting::kWindow: taken = takeDuration(rule_base_.window); break;
      case Setting::kStallAfter: taken = takeDuration(rule_base_.stall_after); break;
      case Setting::kSlowRtt: taken = takeDuration(rule_base_.slow_rtt); break;
      case Setting::kTriggerCount: taken = takeCount(rule_base_.trigger_count, kMaxTriggerCount); break;
      case Setting::kProbeAttempts: taken = takeCount(rule_base_.probe_attempts, kMaxProbeAttempts); break;
      case Setting::kTriggerNow: break;
    }
    if (!taken) return taken;
    // The value first: for "2 s" the missing unit is the news, not the 's'.
    if (tokens.size() > 3)
      return errorHere(directive + " takes one value; " + quoted(tokens[3]) + " is one too many");
    return {};
  }

  static std::string valueDescription(Setting setting) {
    switch (setting) {
      case Setting::kWindow:
      case Setting::kStallAfter:
      case Setting::kSlowRtt: return "a duration such as 500ms or 2s";
      case Setting::kTriggerCount: return "a whole number from 1 to " + std::to_string(kMaxTriggerCount);
      case Setting::kProbeAttempts: return "a whole number from 1 to " + std::to_string(kMaxProbeAttempts);
      case Setting::kTriggerNow: break;
    }
    return "symptom kinds, or none (symptom kinds: " + symptomKindWords() + ")";
  }

  Status parseTriggerNow(const Tokens& tokens) {
    std::set<SymptomKind> kinds;
    for (size_t i = 2; i < tokens.size(); ++i) {
      if (tokens[i] == "none") {
        if (tokens.size() > 3)
          return errorHere("'none' stands alone: it empties trigger_now, so it cannot be listed with symptom kinds");
        break;
      }
      auto kind = parseSymptomKind(tokens[i]);
      if (!kind) return errorHere(unknownSymptomKind(tokens[i]));
      if (!kinds.insert(*kind).second) return errorHere("symptom kind " + quoted(tokens[i]) + " is listed twice");
    }
    rule_base_.trigger_now = std::move(kinds);
    return {};
  }

  static std::string unknownSymptomKind(std::string_view word) {
    return "unknown symptom kind " + quoted(word) + " (symptom kinds: " + symptomKindWords() + ")";
  }

  Status parseRule(const Tokens& tokens) {
    static const std::string kShape =
        "a rule reads 'rule FAULT when SYMPTOM... confirm CONDITION...', e.g. "
        "'rule node_down when heartbeat_lost confirm unreachable'";
    auto has = [&](std::string_view word) { return std::find(tokens.begin(), tokens.end(), word) != tokens.end(); };
    if (tokens.size() < 2 || tokens[1] == "when" || tokens[1] == "confirm")
      return errorHere("rule without a fault kind (fault kinds: " + faultKindWords() + "); " + kShape);
    FaultRule rule;
    rule.line = line_;
    auto fault = parseFaultKind(tokens[1]);
    if (!fault)
      return errorHere("unknown fault kind " + quoted(tokens[1]) + " (fault kinds: " + faultKindWords() + ")");
    rule.fault = *fault;
    if (!has("when")) return errorHere("rule without 'when'; " + kShape);
    if (tokens[2] != "when")
      return errorHere("expected 'when' after 'rule " + std::string(tokens[1]) + "', not " + quoted(tokens[2]) +
                       "; " + kShape);

    size_t i = 3;
    for (; i < tokens.size() && tokens[i] != "confirm"; ++i) {
      if (tokens[i] == "when") return errorHere("'when' given twice; " + kShape);
      auto kind = parseSymptomKind(tokens[i]);
      if (!kind) return errorHere(unknownSymptomKind(tokens[i]));
      if (!rule.when.insert(*kind).second) return errorHere("symptom kind " + quoted(tokens[i]) + " is listed twice");
    }
    if (rule.when.empty())
      return errorHere("'when' lists no symptom kind (symptom kinds: " + symptomKindWords() + ")");
    if (i == tokens.size()) return errorHere("rule without 'confirm'; " + kShape);

    for (++i; i < tokens.size(); ++i) {
      if (tokens[i] == "confirm") return errorHere("'confirm' given twice; " + kShape);
      if (tokens[i] == "when") return errorHere("'when' must come before 'confirm'; " + kShape);
      auto condition = parseProbeCondition(tokens[i]);
      if (!condition)
        return errorHere("unknown probe condition " + quoted(tokens[i]) + " (conditions: " + conditionWords() + ")");
      if (std::find(rule.confirm.begin(), rule.confirm.end(), *condition) != rule.confirm.end())
        return errorHere("condition " + quoted(tokens[i]) + " is listed twice");
      for (ProbeCondition earlier : rule.confirm)
        if (auto why = contradiction(earlier, *condition))
          return errorHere("conditions '" + std::string(probeConditionName(earlier)) + "' and '" +
                           std::string(tokens[i]) + "' contradict each other: " + *why +
                           ", so the rule could never be confirmed");
      rule.confirm.push_back(*condition);
    }
    if (rule.confirm.empty()) return errorHere("'confirm' lists no condition (conditions: " + conditionWords() + ")");
    rule_base_.rules.push_back(std::move(rule));
    return {};
  }

  std::string source_;
  size_t line_ = 0;
  FaultRuleBase rule_base_;
  std::map<Setting, size_t> set_on_line_;
};

// Closes on every path out of load().
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

Error openError(const std::string& path, std::string_view what, int err) {
  std::string message = path + ": " + std::string(what) + ": " + std::strerror(err);
  if (err == ENOENT) return notFound(std::move(message));
  if (err == EACCES) return permissionDenied(std::move(message));
  return unavailable(std::move(message));
}

Result<std::string> readRuleFile(const std::string& path) {
  // O_NONBLOCK: a FIFO at the path must not hang the daemon's reload; it is
  // refused below as not a regular file.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return openError(path, "cannot open the fault rule file", errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return openError(path, "cannot read the fault rule file", errno);
  if (!S_ISREG(info.st_mode)) return invalidArgument(path + ": not a regular file, so not a fault rule file");
  std::string text;
  // One byte past the limit tells a file too large from one at the limit
  // without a huge file ever being read whole.
  text.resize(kMaxFileBytes + 1);
  size_t filled = 0;
  while (filled < text.size()) {
    ssize_t got = ::read(fd.get(), text.data() + filled, text.size() - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return openError(path, "cannot read the fault rule file", errno);
    if (got == 0) break;
    filled += static_cast<size_t>(got);
  }
  // The size stat saw, not the bytes read: those stop at the limit.
  if (filled > kMaxFileBytes)
    return tooLarge(path, std::max<uint64_t>(static_cast<uint64_t>(info.st_size), filled));
  text.resize(filled);
  return text;
}

}  // namespace

std::string_view probeConditionName(ProbeCondition condition) {
  switch (condition) {
    case ProbeCondition::kUnreachable: return "unreachable";
    case ProbeCondition::kReachable: return "reachable";
    case ProbeCondition::kSlow: return "slow";
    case ProbeCondition::kRankGone: return "rank_gone";
    case ProbeCondition::kRankStopped: return "rank_stopped";
    case ProbeCondition::kRankStalled: return "rank_stalled";
    case ProbeCondition::kRanksHealthy: return "ranks_healthy";
    case ProbeCondition::kHot: return "hot";
    case ProbeCondition::kLogPending: return "log_pending";
  }
  return "unknown";
}

Result<FaultRuleBase> RuleFileParser::parse(std::string_view text, std::string_view source_name) {
  return Parser(source_name).run(text);
}

Result<FaultRuleBase> RuleFileParser::load(const std::string& path) {
  auto text = readRuleFile(path);
  if (!text) return text.error();
  return parse(*text, path);
}

const FaultRuleBase& RuleFileParser::builtIn() {
  static const FaultRuleBase rule_base = [] {
    auto parsed = parse(kBuiltInRules, "built-in");
    if (!parsed) {
      // A build that ships rules it cannot read must fail at once and
      // loudly, not run without fault localisation.
      std::fprintf(stderr, "nodekeeper: the built-in fault rules do not parse: %s\n",
                   parsed.error().message.c_str());
      std::abort();
    }
    return std::move(parsed).value();
  }();
  return rule_base;
}

std::string_view RuleFileParser::builtInText() { return kBuiltInRules; }

}  // namespace nk
