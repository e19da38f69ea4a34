// An OMPT tool that registers the same callbacks as libnodekeeper's and does
// nothing in them. ompt_overhead_bench runs it as a third side: the cost
// of LLVM libomp running with any tool attached, which no tool can go below,
// so what libnodekeeper adds on top of it is its own.

#include <omp-tools.h>

namespace {

void onThreadBegin(ompt_thread_t, ompt_data_t*) {}
void onThreadEnd(ompt_data_t*) {}
void onParallelBegin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int, int, const void*) {}
void onParallelEnd(ompt_data_t*, ompt_data_t*, int, const void*) {}

int initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  set_callback(ompt_callback_thread_begin, reinterpret_cast<ompt_callback_t>(&onThreadBegin));
  set_callback(ompt_callback_thread_end, reinterpret_cast<ompt_callback_t>(&onThreadEnd));
  set_callback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&onParallelBegin));
  set_callback(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(&onParallelEnd));
  return 1;
}

void finalize(ompt_data_t*) {}

}  // namespace

extern "C" __attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(unsigned int,
                                                                                             const char*) {
  static ompt_start_tool_result_t result = {&initialize, &finalize, {0}};
  return &result;
}
