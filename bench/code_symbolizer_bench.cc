// What naming task constructs costs the shipper thread (CodeSymbolizer).
//
//   code_symbolizer_bench
//
// Side by side in one run, on this program's own code (built with -g, no
// -rdynamic) and on libc's (a symbol table, no DWARF):
//   - the first name of a fresh symbolizer: libdw's session opened on the
//     process's maps, plus that one name (median of 15 fresh symbolizers)
//   - a new address in a unit already read (DWARF: scopes and line), per
//     address, over 256 distinct functions of this program
//   - the first address in libc (its DWARF, if its debug info is installed,
//     else its symbol table), then a new one after that, per address
//   - an address already named (the cache), per lookup
//   - dladdr, what the shipper called before, per call (exported symbols
//     only: libc's here)
// The app's threads do none of this: the shipper names each construct once.

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "code_symbolizer.h"

using Clock = std::chrono::steady_clock;
using nk::client::CodeSymbolizer;

namespace {

template <int N>
__attribute__((noinline)) int work(int x) {
  return x * N + (x >> (N % 7));
}

template <int... N>
std::vector<uint64_t> workAddresses(std::integer_sequence<int, N...>) {
  // One byte into each function: a return address's "minus one" lands inside.
  return {(reinterpret_cast<uint64_t>(&work<N>) + 2)...};
}

double nsSince(Clock::time_point start) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main() {
  const std::vector<uint64_t> own = workAddresses(std::make_integer_sequence<int, 256>());
  std::vector<uint64_t> libc;
  for (const char* name : {"printf", "malloc", "free", "memcpy", "strlen", "qsort", "fopen", "fclose", "strtol",
                           "getenv", "snprintf", "fwrite", "memmove", "strcmp", "calloc", "realloc"}) {
    if (void* symbol = dlsym(RTLD_DEFAULT, name)) libc.push_back(reinterpret_cast<uint64_t>(symbol) + 5);
  }

  std::vector<double> opens;
  for (int i = 0; i < 15; ++i) {
    CodeSymbolizer fresh;
    auto start = Clock::now();
    std::string name = fresh.name(own[static_cast<size_t>(i)]);
    opens.push_back(nsSince(start));
    if (i == 0) std::printf("first name: %s\n", name.c_str());
  }

  CodeSymbolizer symbolizer;
  (void)symbolizer.name(own[0]);  // session open, unit read
  auto start = Clock::now();
  for (size_t i = 1; i < own.size(); ++i) (void)symbolizer.name(own[i]);
  const double per_own = nsSince(start) / static_cast<double>(own.size() - 1);
  std::printf("e.g. %s\n", symbolizer.name(own[200]).c_str());

  start = Clock::now();
  if (!libc.empty()) (void)symbolizer.name(libc[0]);
  const double first_libc = nsSince(start);
  start = Clock::now();
  for (size_t i = 1; i < libc.size(); ++i) (void)symbolizer.name(libc[i]);
  const double per_libc = nsSince(start) / static_cast<double>(std::max<size_t>(1, libc.size() - 1));
  std::printf("e.g. %s\n", libc.empty() ? "-" : symbolizer.name(libc[0]).c_str());

  constexpr int kRounds = 200;
  start = Clock::now();
  for (int r = 0; r < kRounds; ++r)
    for (uint64_t address : own) (void)symbolizer.name(address);
  const double per_cached = nsSince(start) / static_cast<double>(kRounds * own.size());

  start = Clock::now();
  size_t found = 0;
  for (int r = 0; r < kRounds; ++r)
    for (uint64_t address : libc) {
      Dl_info info{};
      found += dladdr(reinterpret_cast<void*>(address), &info) != 0;
    }
  const double per_dladdr = nsSince(start) / static_cast<double>(kRounds * std::max<size_t>(1, libc.size()));

  std::printf("\n%-62s %14s %10s\n", "CodeSymbolizer (this program: -g, no -rdynamic)", "per name", "vs dladdr");
  auto row = [&](const char* what, double ns) {
    std::printf("%-62s %11.0f ns %9.2fx\n", what, ns, ns / per_dladdr);
  };
  row("first name: libdw session opened, its unit read (median)", median(opens));
  row("new address in a unit already read: function (file:line)", per_own);
  row("first address in libc (its module's units listed)", first_libc);
  row("new address in libc after that", per_libc);
  row("address already named (cache)", per_cached);
  row("dladdr (before; exported symbols only)", per_dladdr);
  std::printf("(%zu functions of this program, %zu of libc, %zu dladdr hits)\n", own.size(), libc.size(),
              found / kRounds);
  return 0;
}
