#pragma once

#include <omp-tools.h>

namespace nk::client {

// The OMPT tool: registers the callbacks and forwards them to Client.
class OmptTool {
 public:
  static ompt_start_tool_result_t* startTool(unsigned int omp_version, const char* runtime_version);

 private:
  static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t* tool_data);
  static void finalize(ompt_data_t* tool_data);
};

}  // namespace nk::client
