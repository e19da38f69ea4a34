// A program as users build theirs (clang -fopenmp -g, no -rdynamic) that
// names the code address of each task construct it runs with the
// CodeSymbolizer, through its own OMPT tool (only ompt_start_tool is
// exported). Prints one line per construct, "<marker> <name>", in the order
// of the markers below; code_symbolizer_test checks the names against this
// file's lines and runs a stripped copy.
//
// The markers are comments on the construct lines: the test looks them up.
#include <omp.h>
#include <omp-tools.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "code_symbolizer.h"

namespace {

std::mutex g_mutex;
std::map<std::string, uint64_t> g_addresses;  // marker -> code address
const char* g_marker = nullptr;  // set by the one thread that creates tasks

void onTaskCreate(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, int flags, int, const void* codeptr_ra) {
  if (!(flags & ompt_task_explicit) || !g_marker) return;
  std::lock_guard lock(g_mutex);
  g_addresses.try_emplace(g_marker, reinterpret_cast<uint64_t>(codeptr_ra));
}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(&onTaskCreate));
  return 1;
}
void finalize(ompt_data_t*) {}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char*) {
  static ompt_start_tool_result_t result{&initialize, &finalize, {}};
  return &result;
}

static long static_fib(int n) {
  if (n < 2) return n;
  long a = 0;
  g_marker = "static";
#pragma omp task shared(a) firstprivate(n)  // MARK:static
  a = static_fib(n - 1);
#pragma omp taskwait
  return a + n;
}

namespace probe {
template <typename T>
T twice(T x) {
  T r = 0;
  g_marker = "template";
#pragma omp task shared(r) firstprivate(x)  // MARK:template
  r = x * 2;
#pragma omp taskwait
  return r;
}
}  // namespace probe

int region(int n) {
  int sum = 0;
  auto before = [](int x) { return x + 1; };  // a lambda above the region: not its function
  sum = before(sum);
#pragma omp parallel num_threads(2) shared(sum)
  {
#pragma omp single
    {
      g_marker = "outlined";
      for (int i = 0; i < n; ++i) {
#pragma omp task shared(sum)  // MARK:outlined
        {
#pragma omp atomic
          sum += 1;
        }
      }
    }
  }
  return sum;
}

int main() {
  long total = static_fib(4) + probe::twice<int>(3) + region(3);
  g_marker = nullptr;
  nk::client::CodeSymbolizer symbolizer;
  for (const char* marker : {"static", "template", "outlined"}) {
    auto found = g_addresses.find(marker);
    std::printf("%s %s\n", marker, found == g_addresses.end() ? "(none)" : symbolizer.name(found->second).c_str());
  }
  return total > 0 ? 0 : 1;
}
