#include "ompt_tool.h"

#include "client.h"

namespace nk::client {

namespace {

void onThreadBegin(ompt_thread_t thread_type, ompt_data_t*) {
  Client::instance().threadBegin(thread_type == ompt_thread_initial);
}

void onThreadEnd(ompt_data_t*) { Client::instance().threadEnd(); }

void onParallelBegin(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, unsigned int requested_parallelism, int,
                     const void*) {
  Client::instance().parallelBegin(requested_parallelism);
}

void onParallelEnd(ompt_data_t*, ompt_data_t*, int, const void*) { Client::instance().parallelEnd(); }

}  // namespace

// Called by the runtime for ompt_start_tool; the tool always attaches.
ompt_start_tool_result_t* OmptTool::startTool(unsigned int, const char*) {
  static ompt_start_tool_result_t result = {&OmptTool::initialize, &OmptTool::finalize, {0}};
  return &result;
}

// Runs at runtime initialisation; returns nonzero to stay active. Callbacks
// only observe; none calls into the daemon.
int OmptTool::initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  Client::instance().ompInitialized();
  set_callback(ompt_callback_thread_begin, reinterpret_cast<ompt_callback_t>(&onThreadBegin));
  set_callback(ompt_callback_thread_end, reinterpret_cast<ompt_callback_t>(&onThreadEnd));
  set_callback(ompt_callback_parallel_begin, reinterpret_cast<ompt_callback_t>(&onParallelBegin));
  set_callback(ompt_callback_parallel_end, reinterpret_cast<ompt_callback_t>(&onParallelEnd));
  return 1;
}

void OmptTool::finalize(ompt_data_t*) { Client::instance().ompFinalized(); }

}  // namespace nk::client
