#include "faults/rule_file_parser.h"
#include "testlib/temp_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nk {
namespace {

using namespace std::chrono_literals;

// The smallest file that parses; tests add the line under test before it.
constexpr std::string_view kOneRule = "rule node_down when heartbeat_lost confirm unreachable\n";

std::string parseError(std::string_view text, std::string_view source = "rules.conf") {
  auto parsed = RuleFileParser::parse(text, source);
  if (parsed) return "(parsed)";
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  return parsed.error().message;
}

// The error of `line` placed on line 2 of an otherwise valid file, so that
// every message is checked for its line number too.
std::string errorOnLine2(std::string_view line) {
  return parseError("# a comment on line 1\n" + std::string(line) + "\n" + std::string(kOneRule));
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}


// --- the shipped rule base ---

TEST(RuleFileParser, ShippedFileEqualsTheCompiledInText) {
  std::string shipped = readFile(NK_DEFAULT_RULES_FILE);
  ASSERT_FALSE(shipped.empty()) << "cannot read " << NK_DEFAULT_RULES_FILE;
  EXPECT_EQ(shipped, std::string(RuleFileParser::builtInText()))
      << "daemon/faults/default_fault_rules.conf and the raw string in rule_file_parser.cc differ: "
         "copy one to the other";
}

TEST(RuleFileParser, BuiltInRulesHaveTheDocumentedDefaults) {
  const FaultRuleBase& rules = RuleFileParser::builtIn();
  EXPECT_EQ(rules.source, "built-in");
  EXPECT_EQ(rules.window, 2000ms);
  EXPECT_EQ(rules.trigger_count, 2u);
  EXPECT_EQ(rules.trigger_now, (std::set<SymptomKind>{SymptomKind::kHeartbeatLost, SymptomKind::kRankExited,
                                                      SymptomKind::kThermalAlarm}));
  EXPECT_EQ(rules.stall_after, 2000ms);
  EXPECT_EQ(rules.slow_rtt, 250ms);
  EXPECT_EQ(rules.probe_attempts, 3u);

  ASSERT_EQ(rules.rules.size(), 6u);
  std::vector<FaultKind> order;
  for (const FaultRule& rule : rules.rules) order.push_back(rule.fault);
  EXPECT_EQ(order, (std::vector<FaultKind>{FaultKind::kNodeDown, FaultKind::kProcessCrash, FaultKind::kProcessHang,
                                           FaultKind::kProcessHang, FaultKind::kNetworkDegraded,
                                           FaultKind::kOverheating}));
  const FaultRule& node_down = rules.rules[0];
  EXPECT_EQ(node_down.when, (std::set<SymptomKind>{SymptomKind::kHeartbeatLost, SymptomKind::kResponseTimeout,
                                                   SymptomKind::kMpiError, SymptomKind::kRankExited}));
  EXPECT_EQ(node_down.confirm, std::vector<ProbeCondition>{ProbeCondition::kUnreachable});
  EXPECT_EQ(rules.rules[1].confirm,
            (std::vector<ProbeCondition>{ProbeCondition::kReachable, ProbeCondition::kRankGone}));
  EXPECT_EQ(rules.rules[2].confirm,
            (std::vector<ProbeCondition>{ProbeCondition::kReachable, ProbeCondition::kRankStopped}));
  EXPECT_EQ(rules.rules[3].confirm,
            (std::vector<ProbeCondition>{ProbeCondition::kReachable, ProbeCondition::kRankStalled}));
  EXPECT_EQ(rules.rules[4].when, (std::set<SymptomKind>{SymptomKind::kResponseTimeout, SymptomKind::kMpiError}));
  EXPECT_EQ(rules.rules[4].confirm, (std::vector<ProbeCondition>{ProbeCondition::kSlow, ProbeCondition::kRanksHealthy,
                                                                 ProbeCondition::kLogPending}));
  EXPECT_EQ(rules.rules[5].when, std::set<SymptomKind>{SymptomKind::kThermalAlarm});
  EXPECT_EQ(rules.rules[5].confirm, (std::vector<ProbeCondition>{ProbeCondition::kReachable, ProbeCondition::kHot}));
  // Lines point into the file, for messages about a rule.
  for (const FaultRule& rule : rules.rules) {
    std::string_view text = RuleFileParser::builtInText();
    size_t start = 0;
    for (size_t line = 1; line < rule.line; ++line) start = text.find('\n', start) + 1;
    EXPECT_EQ(text.substr(start, 5), "rule ") << "line " << rule.line;
  }
}

TEST(RuleFileParser, BuiltInIsParsedOnce) { EXPECT_EQ(&RuleFileParser::builtIn(), &RuleFileParser::builtIn()); }

TEST(RuleFileParser, ShippedFileLoadsLikeTheBuiltIn) {
  auto loaded = RuleFileParser::load(NK_DEFAULT_RULES_FILE);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->source, NK_DEFAULT_RULES_FILE);
  EXPECT_EQ(loaded->rules.size(), RuleFileParser::builtIn().rules.size());
}

// --- what parses ---

TEST(RuleFileParser, SettingsNotGivenKeepTheirDefaults) {
  auto parsed = RuleFileParser::parse(kOneRule, "mine.conf");
  ASSERT_TRUE(parsed) << parsed.error().message;
  FaultRuleBase defaults;
  EXPECT_EQ(parsed->source, "mine.conf");
  EXPECT_EQ(parsed->window, defaults.window);
  EXPECT_EQ(parsed->trigger_count, defaults.trigger_count);
  EXPECT_EQ(parsed->trigger_now, defaults.trigger_now);
  EXPECT_EQ(parsed->stall_after, defaults.stall_after);
  EXPECT_EQ(parsed->slow_rtt, defaults.slow_rtt);
  EXPECT_EQ(parsed->probe_attempts, defaults.probe_attempts);
  ASSERT_EQ(parsed->rules.size(), 1u);
  EXPECT_EQ(parsed->rules[0].line, 1u);
}

TEST(RuleFileParser, ReadsEverySettingAndKeepsRulesInFileOrder) {
  auto parsed = RuleFileParser::parse(
      "\n"
      "  set window 1.5s   # trailing comment\n"
      "set trigger_count 5\n"
      "\tset trigger_now power_alarm mpi_error\r\n"
      "set stall_after 750ms\n"
      "set slow_rtt 0.25s\n"
      "set probe_attempts 10\n"
      "# rules\n"
      "rule overheating when thermal_alarm power_alarm confirm hot\n"
      "rule node_down when heartbeat_lost confirm unreachable#no space before the comment",
      "test");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->window, 1500ms);
  EXPECT_EQ(parsed->trigger_count, 5u);
  EXPECT_EQ(parsed->trigger_now, (std::set<SymptomKind>{SymptomKind::kPowerAlarm, SymptomKind::kMpiError}));
  EXPECT_EQ(parsed->stall_after, 750ms);
  EXPECT_EQ(parsed->slow_rtt, 250ms);
  EXPECT_EQ(parsed->probe_attempts, 10u);
  ASSERT_EQ(parsed->rules.size(), 2u);
  EXPECT_EQ(parsed->rules[0].fault, FaultKind::kOverheating);
  EXPECT_EQ(parsed->rules[0].line, 9u);
  EXPECT_EQ(parsed->rules[0].when, (std::set<SymptomKind>{SymptomKind::kThermalAlarm, SymptomKind::kPowerAlarm}));
  EXPECT_EQ(parsed->rules[1].fault, FaultKind::kNodeDown);
  EXPECT_EQ(parsed->rules[1].line, 10u);
  EXPECT_EQ(parsed->rules[1].confirm, std::vector<ProbeCondition>{ProbeCondition::kUnreachable});
}

TEST(RuleFileParser, TriggerNowNoneEmptiesTheSet) {
  auto parsed = RuleFileParser::parse("set trigger_now none\n" + std::string(kOneRule), "test");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_TRUE(parsed->trigger_now.empty());
}

TEST(RuleFileParser, DurationForms) {
  auto window = [](std::string_view value) {
    auto parsed = RuleFileParser::parse("set window " + std::string(value) + "\n" + std::string(kOneRule), "t");
    EXPECT_TRUE(parsed) << value << ": " << parsed.error().message;
    return parsed ? parsed->window : 0ms;
  };
  EXPECT_EQ(window("1ms"), 1ms);
  EXPECT_EQ(window("500ms"), 500ms);
  EXPECT_EQ(window("2s"), 2000ms);
  EXPECT_EQ(window("0.5s"), 500ms);
  EXPECT_EQ(window("1.25s"), 1250ms);
  EXPECT_EQ(window("0.001s"), 1ms);
  EXPECT_EQ(window("1.5000s"), 1500ms);
  EXPECT_EQ(window("3600s"), 3600000ms);
  EXPECT_EQ(window("007s"), 7000ms);
}

TEST(RuleFileParser, EveryWordIsAccepted) {
  for (std::string_view symptom :
       {"response_timeout", "mpi_error", "heartbeat_lost", "thermal_alarm", "power_alarm", "rank_exited"}) {
    auto parsed = RuleFileParser::parse("rule node_down when " + std::string(symptom) + " confirm unreachable", "t");
    EXPECT_TRUE(parsed) << symptom;
  }
  for (std::string_view fault : {"node_down", "process_hang", "process_crash", "network_degraded", "overheating"}) {
    auto parsed = RuleFileParser::parse("rule " + std::string(fault) + " when mpi_error confirm reachable", "t");
    ASSERT_TRUE(parsed) << fault;
    EXPECT_EQ(faultKindName(parsed->rules[0].fault), fault);
  }
  for (std::string_view condition : {"unreachable", "reachable", "slow", "rank_gone", "rank_stopped", "rank_stalled",
                                     "ranks_healthy", "hot", "log_pending"}) {
    auto parsed = RuleFileParser::parse("rule node_down when mpi_error confirm " + std::string(condition), "t");
    ASSERT_TRUE(parsed) << condition;
    EXPECT_EQ(probeConditionName(parsed->rules[0].confirm[0]), condition);
  }
}

TEST(RuleFileParser, ConditionsThatCanHoldTogetherAreAccepted) {
  EXPECT_TRUE(RuleFileParser::parse("rule network_degraded when mpi_error confirm reachable slow log_pending", "t"));
  EXPECT_TRUE(RuleFileParser::parse("rule process_hang when mpi_error confirm rank_stopped rank_stalled", "t"));
}

// --- errors, each with its line ---

TEST(RuleFileParserErrors, UnknownDirective) {
  EXPECT_EQ(errorOnLine2("sett window 2s"), "rules.conf:2: unknown directive 'sett' (directives: set, rule)");
  EXPECT_EQ(errorOnLine2("window 2s"), "rules.conf:2: unknown directive 'window' (directives: set, rule)");
}

TEST(RuleFileParserErrors, UnknownSetting) {
  EXPECT_EQ(errorOnLine2("set windw 2s"),
            "rules.conf:2: unknown setting 'windw' (settings: window, trigger_count, trigger_now, stall_after, "
            "slow_rtt, probe_attempts)");
  EXPECT_EQ(errorOnLine2("set"),
            "rules.conf:2: 'set' needs a setting and its value (settings: window, trigger_count, trigger_now, "
            "stall_after, slow_rtt, probe_attempts)");
}

TEST(RuleFileParserErrors, MissingValue) {
  EXPECT_EQ(errorOnLine2("set window"), "rules.conf:2: 'set window' needs a duration such as 500ms or 2s");
  EXPECT_EQ(errorOnLine2("set slow_rtt # comment"),
            "rules.conf:2: 'set slow_rtt' needs a duration such as 500ms or 2s");
  EXPECT_EQ(errorOnLine2("set trigger_count"),
            "rules.conf:2: 'set trigger_count' needs a whole number from 1 to 1000000");
  EXPECT_EQ(errorOnLine2("set probe_attempts"), "rules.conf:2: 'set probe_attempts' needs a whole number from 1 to 10");
  EXPECT_EQ(errorOnLine2("set trigger_now"),
            "rules.conf:2: 'set trigger_now' needs symptom kinds, or none (symptom kinds: response_timeout, "
            "mpi_error, heartbeat_lost, thermal_alarm, power_alarm, rank_exited)");
}

TEST(RuleFileParserErrors, TooManyValues) {
  EXPECT_EQ(errorOnLine2("set window 2 s"), "rules.conf:2: '2' is not a duration (use 500ms or 2s)");
  EXPECT_EQ(errorOnLine2("set window 2s 3s"), "rules.conf:2: 'set window' takes one value; '3s' is one too many");
  EXPECT_EQ(errorOnLine2("set probe_attempts 3 4"),
            "rules.conf:2: 'set probe_attempts' takes one value; '4' is one too many");
}

TEST(RuleFileParserErrors, BadDuration) {
  for (std::string_view bad :
       {"2x", "2", "ms", "s", "1.5ms", "2.s", ".5s", "1,5s", "2sec", "2S", "+2s", "0x10s", "--1s"})
    EXPECT_EQ(errorOnLine2("set window " + std::string(bad)),
              "rules.conf:2: '" + std::string(bad) + "' is not a duration (use 500ms or 2s)");
  EXPECT_EQ(errorOnLine2("set stall_after 1.0005s"), "rules.conf:2: '1.0005s' is finer than a millisecond");
}

TEST(RuleFileParserErrors, DurationMustBePositive) {
  EXPECT_EQ(errorOnLine2("set window 0s"), "rules.conf:2: window must be greater than 0, not '0s'");
  EXPECT_EQ(errorOnLine2("set stall_after 0ms"), "rules.conf:2: stall_after must be greater than 0, not '0ms'");
  EXPECT_EQ(errorOnLine2("set slow_rtt 0.000s"), "rules.conf:2: slow_rtt must be greater than 0, not '0.000s'");
  EXPECT_EQ(errorOnLine2("set window -1s"), "rules.conf:2: window must be greater than 0, not '-1s'");
  EXPECT_EQ(errorOnLine2("set slow_rtt -250ms"), "rules.conf:2: slow_rtt must be greater than 0, not '-250ms'");
}

TEST(RuleFileParserErrors, DurationOutOfRange) {
  EXPECT_EQ(errorOnLine2("set window 3601s"), "rules.conf:2: window must be at most 3600s, not '3601s'");
  EXPECT_EQ(errorOnLine2("set window 99999999999999999999999ms"),
            "rules.conf:2: window must be at most 3600s, not '99999999999999999999999ms'");
}

TEST(RuleFileParserErrors, BadInteger) {
  EXPECT_EQ(errorOnLine2("set trigger_count two"),
            "rules.conf:2: 'two' is not an integer (trigger_count takes a whole number from 1 to 1000000)");
  EXPECT_EQ(errorOnLine2("set probe_attempts 2.5"),
            "rules.conf:2: '2.5' is not an integer (probe_attempts takes a whole number from 1 to 10)");
  EXPECT_EQ(errorOnLine2("set probe_attempts +3"),
            "rules.conf:2: '+3' is not an integer (probe_attempts takes a whole number from 1 to 10)");
}

TEST(RuleFileParserErrors, IntegerOutOfRange) {
  EXPECT_EQ(errorOnLine2("set trigger_count 0"), "rules.conf:2: trigger_count must be between 1 and 1000000, not 0");
  EXPECT_EQ(errorOnLine2("set trigger_count -2"), "rules.conf:2: trigger_count must be between 1 and 1000000, not -2");
  EXPECT_EQ(errorOnLine2("set trigger_count 1000001"),
            "rules.conf:2: trigger_count must be between 1 and 1000000, not 1000001");
  EXPECT_EQ(errorOnLine2("set trigger_count 99999999999999999999999"),
            "rules.conf:2: trigger_count must be between 1 and 1000000, not 99999999999999999999999");
  EXPECT_EQ(errorOnLine2("set probe_attempts 0"), "rules.conf:2: probe_attempts must be between 1 and 10, not 0");
  EXPECT_EQ(errorOnLine2("set probe_attempts 11"), "rules.conf:2: probe_attempts must be between 1 and 10, not 11");
}

TEST(RuleFileParserErrors, DuplicateSettingNamesTheFirstLine) {
  EXPECT_EQ(parseError("set window 2s\n\nset trigger_count 3\nset window 3s\n" + std::string(kOneRule)),
            "rules.conf:4: duplicate setting 'window' (first set on line 1)");
  EXPECT_EQ(parseError("set trigger_now none\nset trigger_now mpi_error\n" + std::string(kOneRule)),
            "rules.conf:2: duplicate setting 'trigger_now' (first set on line 1)");
}

TEST(RuleFileParserErrors, TriggerNow) {
  EXPECT_EQ(errorOnLine2("set trigger_now heartbeat_lost rank_crashed"),
            "rules.conf:2: unknown symptom kind 'rank_crashed' (symptom kinds: response_timeout, mpi_error, "
            "heartbeat_lost, thermal_alarm, power_alarm, rank_exited)");
  EXPECT_EQ(errorOnLine2("set trigger_now none heartbeat_lost"),
            "rules.conf:2: 'none' stands alone: it empties trigger_now, so it cannot be listed with symptom kinds");
  EXPECT_EQ(errorOnLine2("set trigger_now heartbeat_lost none"),
            "rules.conf:2: 'none' stands alone: it empties trigger_now, so it cannot be listed with symptom kinds");
  EXPECT_EQ(errorOnLine2("set trigger_now mpi_error mpi_error"),
            "rules.conf:2: symptom kind 'mpi_error' is listed twice");
  EXPECT_EQ(errorOnLine2("set trigger_now unspecified"),
            "rules.conf:2: unknown symptom kind 'unspecified' (symptom kinds: response_timeout, mpi_error, "
            "heartbeat_lost, thermal_alarm, power_alarm, rank_exited)");
}

TEST(RuleFileParserErrors, UnknownFaultKind) {
  EXPECT_EQ(errorOnLine2("rule node_dead when mpi_error confirm unreachable"),
            "rules.conf:2: unknown fault kind 'node_dead' (fault kinds: node_down, process_hang, process_crash, "
            "network_degraded, overheating)");
  EXPECT_EQ(errorOnLine2("rule unspecified when mpi_error confirm unreachable"),
            "rules.conf:2: unknown fault kind 'unspecified' (fault kinds: node_down, process_hang, process_crash, "
            "network_degraded, overheating)");
}

TEST(RuleFileParserErrors, RuleWithoutFaultKind) {
  const std::string expected =
      "rules.conf:2: rule without a fault kind (fault kinds: node_down, process_hang, process_crash, "
      "network_degraded, overheating); a rule reads 'rule FAULT when SYMPTOM... confirm CONDITION...', e.g. "
      "'rule node_down when heartbeat_lost confirm unreachable'";
  EXPECT_EQ(errorOnLine2("rule"), expected);
  EXPECT_EQ(errorOnLine2("rule when mpi_error confirm unreachable"), expected);
}

TEST(RuleFileParserErrors, UnknownSymptomKind) {
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost timeout confirm unreachable"),
            "rules.conf:2: unknown symptom kind 'timeout' (symptom kinds: response_timeout, mpi_error, "
            "heartbeat_lost, thermal_alarm, power_alarm, rank_exited)");
}

TEST(RuleFileParserErrors, UnknownCondition) {
  EXPECT_EQ(errorOnLine2("rule overheating when thermal_alarm confirm reachable hott"),
            "rules.conf:2: unknown probe condition 'hott' (conditions: unreachable, reachable, slow, rank_gone, "
            "rank_stopped, rank_stalled, ranks_healthy, hot, log_pending)");
}

TEST(RuleFileParserErrors, RuleWithoutWhenOrConfirm) {
  const std::string shape =
      "; a rule reads 'rule FAULT when SYMPTOM... confirm CONDITION...', e.g. "
      "'rule node_down when heartbeat_lost confirm unreachable'";
  EXPECT_EQ(errorOnLine2("rule node_down"), "rules.conf:2: rule without 'when'" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down confirm unreachable"), "rules.conf:2: rule without 'when'" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down heartbeat_lost when mpi_error confirm unreachable"),
            "rules.conf:2: expected 'when' after 'rule node_down', not 'heartbeat_lost'" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down confirm unreachable when mpi_error"),
            "rules.conf:2: expected 'when' after 'rule node_down', not 'confirm'" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost"), "rules.conf:2: rule without 'confirm'" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost when mpi_error confirm unreachable"),
            "rules.conf:2: 'when' given twice" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost confirm unreachable confirm unreachable"),
            "rules.conf:2: 'confirm' given twice" + shape);
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost confirm unreachable when mpi_error"),
            "rules.conf:2: 'when' must come before 'confirm'" + shape);
}

TEST(RuleFileParserErrors, EmptyLists) {
  EXPECT_EQ(errorOnLine2("rule node_down when confirm unreachable"),
            "rules.conf:2: 'when' lists no symptom kind (symptom kinds: response_timeout, mpi_error, "
            "heartbeat_lost, thermal_alarm, power_alarm, rank_exited)");
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost confirm"),
            "rules.conf:2: 'confirm' lists no condition (conditions: unreachable, reachable, slow, rank_gone, "
            "rank_stopped, rank_stalled, ranks_healthy, hot, log_pending)");
  EXPECT_EQ(errorOnLine2("rule node_down when heartbeat_lost confirm # conditions later"),
            "rules.conf:2: 'confirm' lists no condition (conditions: unreachable, reachable, slow, rank_gone, "
            "rank_stopped, rank_stalled, ranks_healthy, hot, log_pending)");
}

TEST(RuleFileParserErrors, RepeatedWordsInARule) {
  EXPECT_EQ(errorOnLine2("rule node_down when mpi_error mpi_error confirm unreachable"),
            "rules.conf:2: symptom kind 'mpi_error' is listed twice");
  EXPECT_EQ(errorOnLine2("rule node_down when mpi_error confirm unreachable unreachable"),
            "rules.conf:2: condition 'unreachable' is listed twice");
}

TEST(RuleFileParserErrors, ContradictoryConditions) {
  EXPECT_EQ(errorOnLine2("rule node_down when mpi_error confirm reachable unreachable"),
            "rules.conf:2: conditions 'reachable' and 'unreachable' contradict each other: a node's daemon either "
            "answers the response probe or not, so the rule could never be confirmed");
  EXPECT_EQ(errorOnLine2("rule node_down when mpi_error confirm unreachable slow"),
            "rules.conf:2: conditions 'unreachable' and 'slow' contradict each other: slow means the node's daemon "
            "answered, if late, so the rule could never be confirmed");
  for (std::string_view status : {"rank_gone", "rank_stopped", "rank_stalled", "ranks_healthy", "hot"}) {
    EXPECT_EQ(errorOnLine2("rule node_down when mpi_error confirm unreachable " + std::string(status)),
              "rules.conf:2: conditions 'unreachable' and '" + std::string(status) +
                  "' contradict each other: an unreachable node cannot answer a status probe, so the rule could "
                  "never be confirmed");
    EXPECT_EQ(errorOnLine2("rule node_down when mpi_error confirm " + std::string(status) + " unreachable"),
              "rules.conf:2: conditions '" + std::string(status) +
                  "' and 'unreachable' contradict each other: an unreachable node cannot answer a status probe, so "
                  "the rule could never be confirmed");
  }
  EXPECT_EQ(errorOnLine2("rule node_down when mpi_error confirm log_pending unreachable"),
            "rules.conf:2: conditions 'log_pending' and 'unreachable' contradict each other: an unreachable node "
            "cannot answer a log probe, so the rule could never be confirmed");
  EXPECT_EQ(errorOnLine2("rule process_hang when mpi_error confirm ranks_healthy rank_stalled"),
            "rules.conf:2: conditions 'ranks_healthy' and 'rank_stalled' contradict each other: ranks_healthy means "
            "every rank there runs and reports, so the rule could never be confirmed");
}

TEST(RuleFileParserErrors, NoRule) {
  EXPECT_EQ(parseError("", "empty.conf"), "empty.conf: no rule: fault localisation would never report a fault");
  EXPECT_EQ(parseError("# only comments\n\nset window 2s\n", "x.conf"),
            "x.conf: no rule: fault localisation would never report a fault");
}

TEST(RuleFileParserErrors, LineNumbersCountEveryLine) {
  EXPECT_EQ(parseError(std::string(kOneRule) + "\n# comment\n   \r\nrule hang when mpi_error confirm reachable\n"),
            "rules.conf:5: unknown fault kind 'hang' (fault kinds: node_down, process_hang, process_crash, "
            "network_degraded, overheating)");
  // The first error stops the parse; the valid rule after it does not help.
  EXPECT_EQ(parseError("bogus\n" + std::string(kOneRule)),
            "rules.conf:1: unknown directive 'bogus' (directives: set, rule)");
}

TEST(RuleFileParserErrors, ControlBytesAreEscapedInMessages) {
  EXPECT_EQ(errorOnLine2(std::string("set\x01 window 2s")),
            "rules.conf:2: unknown directive 'set\\x01' (directives: set, rule)");
}

TEST(RuleFileParserErrors, LineLongerThan4096Bytes) {
  std::string comment_line = "#" + std::string(4095, 'x');
  EXPECT_TRUE(RuleFileParser::parse(comment_line + "\n" + std::string(kOneRule), "t")) << "4096 bytes is allowed";
  EXPECT_EQ(errorOnLine2(comment_line + "x"), "rules.conf:2: line of 4097 bytes, over the limit of 4096");
}

TEST(RuleFileParserErrors, FileLargerThan1MiB) {
  std::string filler;
  while (filler.size() <= (1u << 20)) filler += "# padding padding padding padding padding padding padding\n";
  std::string text = std::string(kOneRule) + filler;
  EXPECT_EQ(parseError(text, "big.conf"), "big.conf: " + std::to_string(text.size()) +
                                              " bytes, over the 1 MiB limit of a rule file (is it the right file?)");
  std::string at_limit = std::string(kOneRule);
  at_limit += std::string((1u << 20) - at_limit.size(), '\n');
  EXPECT_TRUE(RuleFileParser::parse(at_limit, "t")) << "exactly 1 MiB is allowed";
}

// --- load ---

TEST(RuleFileParserLoad, LoadsAFileAndNamesItAsTheSource) {
  test::TempDir dir("rules");
  std::string path = dir.writeFile("rules.conf", "set probe_attempts 5\n" + std::string(kOneRule));
  auto loaded = RuleFileParser::load(path);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->source, path);
  EXPECT_EQ(loaded->probe_attempts, 5u);
}

TEST(RuleFileParserLoad, ErrorsNameThePath) {
  test::TempDir dir("rules");
  std::string path = dir.writeFile("bad.conf", std::string(kOneRule) + "set window soon\n");
  auto loaded = RuleFileParser::load(path);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(loaded.error().message, path + ":2: 'soon' is not a duration (use 500ms or 2s)");
}

TEST(RuleFileParserLoad, MissingFile) {
  test::TempDir dir("rules");
  std::string path = (dir.path() / "absent.conf").string();
  auto loaded = RuleFileParser::load(path);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(loaded.error().message, path + ": cannot open the fault rule file: No such file or directory");
}

TEST(RuleFileParserLoad, UnreadableFile) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads any file";
  test::TempDir dir("rules");
  std::string path = dir.writeFile("secret.conf", kOneRule);
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  auto loaded = RuleFileParser::load(path);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(loaded.error().message, path + ": cannot open the fault rule file: Permission denied");
}

TEST(RuleFileParserLoad, DirectoryAndFifoAreRefused) {
  test::TempDir dir("rules");
  auto loaded = RuleFileParser::load(dir.path().string());
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().message, dir.path().string() + ": not a regular file, so not a fault rule file");

  // Opening a FIFO without a writer must not block a reload.
  std::string fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  loaded = RuleFileParser::load(fifo);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().message, fifo + ": not a regular file, so not a fault rule file");
}

TEST(RuleFileParserLoad, FileLargerThan1MiBIsRefused) {
  test::TempDir dir("rules");
  std::string path = dir.writeFile("huge.conf", std::string(kOneRule) + std::string(3u << 20, '\n'));
  auto loaded = RuleFileParser::load(path);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(loaded.error().message, path + ": " + std::to_string(kOneRule.size() + (3u << 20)) +
                                        " bytes, over the 1 MiB limit of a rule file (is it the right file?)");
}

}  // namespace
}  // namespace nk
