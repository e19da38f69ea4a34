#include "code_symbolizer.h"
#include "wire/task_function_name.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "testlib/run_program.h"
#include "testlib/test_env.h"

namespace nk::client {
namespace {

// symbolizer_probe's lines, "<marker> <name>", by marker.
std::map<std::string, std::string> namesOf(const std::string& program) {
  test::ProcessResult run = test::runProgram({program});
  EXPECT_EQ(run.exit_code, 0) << program << ": " << run.err;
  std::map<std::string, std::string> names;
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.find(' ');
    if (space != std::string::npos) names[line.substr(0, space)] = line.substr(space + 1);
  }
  return names;
}

// The line of the probe's source that carries "MARK:<marker>".
int markedLine(const std::string& marker) {
  std::ifstream source(test::envOr("NK_SYMBOLIZER_PROBE_SOURCE"));
  std::string line;
  for (int number = 1; std::getline(source, line); ++number)
    if (line.find("// MARK:" + marker) != std::string::npos) return number;
  ADD_FAILURE() << "no MARK:" << marker << " in the probe's source";
  return -1;
}

std::string atMarker(const std::string& function, const std::string& marker) {
  return function + " (symbolizer_probe.cc:" + std::to_string(markedLine(marker)) + ")";
}

class CodeSymbolizerProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::envOr("NK_SYMBOLIZER_PROBE").empty()) GTEST_SKIP() << "no clang: the probes were not built";
  }
};

TEST_F(CodeSymbolizerProbe, NamesEachConstructByItsFunctionAndLine) {
  auto names = namesOf(test::envOr("NK_SYMBOLIZER_PROBE"));
  EXPECT_EQ(names["static"], atMarker("static_fib", "static"));
  EXPECT_EQ(names["template"], atMarker("probe::twice<int>", "template"));
  // The construct sits in clang's .omp_outlined. code: named after the
  // function whose source holds it, not the lambda declared above it.
  EXPECT_EQ(names["outlined"], atMarker("region", "outlined"));
  for (const auto& [marker, name] : names) EXPECT_EQ(name.find(".omp"), std::string::npos) << name;
}

TEST_F(CodeSymbolizerProbe, WithoutDwarfTheSymbolTableNamesFunctions) {
  auto names = namesOf(test::envOr("NK_SYMBOLIZER_PROBE_SYMTAB"));
  const std::regex offset("\\+0x[0-9a-f]+$");
  EXPECT_EQ(names["static"].rfind("static_fib+0x", 0), 0u) << names["static"];
  EXPECT_TRUE(std::regex_search(names["static"], offset)) << names["static"];
  EXPECT_EQ(names["template"].rfind("probe::twice<int>+0x", 0), 0u) << names["template"];
  // Outlined code has no name of the user's without DWARF: where it is.
  EXPECT_EQ(names["outlined"].rfind("symbolizer_probe_symtab+0x", 0), 0u) << names["outlined"];
}

// A stripped program: its module and the address in its ELF file, the same
// in every run whatever ASLR did, and the address addr2line reads.
TEST_F(CodeSymbolizerProbe, StrippedProgramsGetModulePlusOffsetStableAcrossRuns) {
  auto first = namesOf(test::envOr("NK_SYMBOLIZER_PROBE_STRIPPED"));
  auto second = namesOf(test::envOr("NK_SYMBOLIZER_PROBE_STRIPPED"));
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first, second);
  const std::regex shape("symbolizer_probe_stripped\\+0x([0-9a-f]+)");
  for (const auto& [marker, name] : first) {
    std::smatch match;
    ASSERT_TRUE(std::regex_match(name, match, shape)) << name;
    // The call before the return address, in the unstripped original.
    uint64_t call = std::stoull(match[1].str(), nullptr, 16) - 1;
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(call));
    test::ProcessResult where = test::runProgram({"addr2line", "-e", test::envOr("NK_SYMBOLIZER_PROBE"), hex});
    EXPECT_NE(where.out.find("symbolizer_probe.cc:" + std::to_string(markedLine(marker))), std::string::npos)
        << marker << " " << name << ": addr2line says " << where.out;
  }
}

TEST(CodeSymbolizer, CachesAndFallsBack) {
  CodeSymbolizer symbolizer;
  EXPECT_FALSE(symbolizer.cached(0x10).has_value());
  // Nothing is mapped at the bottom of the address space.
  EXPECT_EQ(symbolizer.name(0x10), "0x10");
  EXPECT_EQ(symbolizer.cached(0x10), "0x10");
  EXPECT_EQ(symbolizer.name(0), "0x0");
}

TEST(CodeSymbolizer, NamesItsOwnTestFunctions) {
  CodeSymbolizer symbolizer;
  // An address inside this very test body: the test's own function.
  const uint64_t here = reinterpret_cast<uint64_t>(&markedLine) + 1;
  std::string name = symbolizer.name(here);
  EXPECT_EQ(std::string(wire::TaskFunctionName::bareFunction(name)), "nk::client::(anonymous namespace)::markedLine") << name;
}

TEST(CodeSymbolizer, SignaturesComeOff) {
  EXPECT_EQ(CodeSymbolizer::withoutSignature("fib(int)"), "fib");
  EXPECT_EQ(CodeSymbolizer::withoutSignature("int ns::work<int>(int)"), "ns::work<int>");
  EXPECT_EQ(CodeSymbolizer::withoutSignature("ns::C::run(std::vector<int, std::allocator<int> > const&) const"),
            "ns::C::run");
  EXPECT_EQ(CodeSymbolizer::withoutSignature("(anonymous namespace)::helper(long*)"), "(anonymous namespace)::helper");
  EXPECT_EQ(CodeSymbolizer::withoutSignature("f()::{lambda(int)#1}::operator()(int) const"),
            "f()::{lambda(int)#1}::operator()");
  EXPECT_EQ(CodeSymbolizer::withoutSignature("main"), "main");
  EXPECT_EQ(CodeSymbolizer::withoutSignature("broken(int"), "broken(int");
}

TEST(CodeSymbolizer, BareFunctionIsWhatAUserTypes) {
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("fib (fib.c:31)"), "fib");
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("ns::work<int> (w.cc:12)"), "ns::work<int>");
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("fib+0x1f"), "fib");
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("prog+0x1234"), "prog");
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("prog+0x1234 (fib.c:3)"), "prog+0x1234");
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("0x7f00"), "0x7f00");
  EXPECT_EQ(wire::TaskFunctionName::bareFunction("compute"), "compute");
}

}  // namespace
}  // namespace nk::client
