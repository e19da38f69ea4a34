// An OMPT tool linked into the oracle programs, in front of libnodekeeper's:
// the runtime finds this ompt_start_tool first (the program's own symbol),
// which loads the library OMP_TOOL_LIBRARIES names and starts it with a
// lookup whose ompt_set_callback is wrapped. So every task_create and
// dependences callback runs libnodekeeper's first, then logs what the
// runtime said (parent id, the task id libnodekeeper gave, the raw
// dependence list) to $NK_ORACLE_LOG, which the oracle test reads. Nothing
// here uses libnodekeeper's code: the log is the runtime's word.
//
// Log lines: "C <parent> <task>" for each explicit task created, and
// "D <task> <n> <address> <ompt type> ..." for its dependences, in the
// order the runtime reported them (a parent's children in program order).
#include <dlfcn.h>
#include <omp-tools.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

ompt_start_tool_result_t* g_nodekeeper = nullptr;
ompt_function_lookup_t g_lookup = nullptr;
ompt_set_callback_t g_set_callback = nullptr;
ompt_callback_task_create_t g_nk_task_create = nullptr;
ompt_callback_dependences_t g_nk_dependences = nullptr;
std::mutex g_mutex;
FILE* g_log = nullptr;

void onTaskCreate(ompt_data_t* parent, const ompt_frame_t* frame, ompt_data_t* task, int flags, int has_dependences,
                  const void* codeptr) {
  if (g_nk_task_create) g_nk_task_create(parent, frame, task, flags, has_dependences, codeptr);
  if (!g_log || !parent || !task || (flags & (ompt_task_initial | ompt_task_implicit))) return;
  std::lock_guard lock(g_mutex);
  std::fprintf(g_log, "C %" PRIu64 " %" PRIu64 "\n", parent->value, task->value);
}

void onDependences(ompt_data_t* task, const ompt_dependence_t* deps, int count) {
  if (g_nk_dependences) g_nk_dependences(task, deps, count);
  if (!g_log || !task) return;
  std::lock_guard lock(g_mutex);
  std::fprintf(g_log, "D %" PRIu64 " %d", task->value, count);
  for (int i = 0; i < count; ++i)
    std::fprintf(g_log, " %" PRIu64 " %d", static_cast<uint64_t>(reinterpret_cast<uintptr_t>(deps[i].variable.ptr)),
                 static_cast<int>(deps[i].dependence_type));
  std::fputc('\n', g_log);
}

int setCallback(ompt_callbacks_t event, ompt_callback_t callback) {
  if (event == ompt_callback_task_create) {
    g_nk_task_create = reinterpret_cast<ompt_callback_task_create_t>(callback);
    return g_set_callback(event, reinterpret_cast<ompt_callback_t>(&onTaskCreate));
  }
  if (event == ompt_callback_dependences) {
    g_nk_dependences = reinterpret_cast<ompt_callback_dependences_t>(callback);
    return g_set_callback(event, reinterpret_cast<ompt_callback_t>(&onDependences));
  }
  return g_set_callback(event, callback);
}

ompt_interface_fn_t lookup(const char* name) {
  if (std::strcmp(name, "ompt_set_callback") == 0) return reinterpret_cast<ompt_interface_fn_t>(&setCallback);
  return g_lookup(name);
}

int initialize(ompt_function_lookup_t runtime_lookup, int initial_device, ompt_data_t*) {
  g_lookup = runtime_lookup;
  g_set_callback = reinterpret_cast<ompt_set_callback_t>(runtime_lookup("ompt_set_callback"));
  if (!g_set_callback) return 0;
  if (const char* path = std::getenv("NK_ORACLE_LOG")) g_log = std::fopen(path, "w");
  if (g_nodekeeper && !g_nodekeeper->initialize(&lookup, initial_device, &g_nodekeeper->tool_data))
    g_nodekeeper = nullptr;
  // Logged even if libnodekeeper did not ask for them: the test then finds
  // the recording empty, not the log.
  if (!g_nk_task_create) g_set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(&onTaskCreate));
  if (!g_nk_dependences) g_set_callback(ompt_callback_dependences, reinterpret_cast<ompt_callback_t>(&onDependences));
  return 1;
}

void finalize(ompt_data_t*) {
  if (g_nodekeeper) g_nodekeeper->finalize(&g_nodekeeper->tool_data);
  std::lock_guard lock(g_mutex);
  if (g_log) std::fclose(g_log);
  g_log = nullptr;
}

}  // namespace

extern "C" ompt_start_tool_result_t* ompt_start_tool(unsigned int omp_version, const char* runtime_version) {
  if (const char* library = std::getenv("OMP_TOOL_LIBRARIES")) {
    if (void* handle = dlopen(library, RTLD_NOW | RTLD_GLOBAL)) {
      using StartTool = ompt_start_tool_result_t* (*)(unsigned int, const char*);
      if (auto start = reinterpret_cast<StartTool>(dlsym(handle, "ompt_start_tool")))
        g_nodekeeper = start(omp_version, runtime_version);
    } else {
      std::fprintf(stderr, "ompt_shim: cannot load %s: %s\n", library, dlerror());
    }
  }
  static ompt_start_tool_result_t result = {&initialize, &finalize, {0}};
  return &result;
}
