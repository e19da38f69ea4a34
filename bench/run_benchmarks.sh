#!/usr/bin/env bash
# run_benchmarks.sh BUILD_DIR [ARGS...]: every benchmark, one table each.
set -euo pipefail
build=$1
shift
export NK_DAEMON="$build/daemon/nodekeeperd" NK_CLI="$build/cli/nodekeeper"
"$build/bench/telemetry_bench" "$@"
echo
"$build/bench/busy_node_bench"
echo
"$build/bench/stream_cost_bench"
echo
"$build/bench/metrics_bench"
echo
"$build/bench/energy_step_bench"
echo
"$build/bench/energy_accounting_bench"
if [[ -x "$build/bench/ompt_overhead_bench" ]]; then
  echo
  "$build/bench/ompt_overhead_bench" --null-tool "$build/bench/libompt_null_tool.so" "$build/client-lib/libnodekeeper.so"
fi
if [[ -x "$build/examples/omp_phases_clang" ]]; then
  echo
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" NK_PROGRAM="$build/tests/integration/client/omp_probe_clang" \
    "$build/bench/budget_tracking_bench"
fi
if [[ -x "$build/bench/energy/workload_runner" && -x "$build/bench/energy/sim_validation_bench" ]]; then
  echo
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" NK_RUNNER="$build/bench/energy/workload_runner" \
    "$build/bench/energy/sim_validation_bench"
fi
# Task events: the ring, the recording and the exports on their own.
for b in event_ring_bench task_capture_bench compact_events_bench recording_bench task_graph_window_bench graph_export_bench code_symbolizer_bench; do
  if [[ -x "$build/bench/$b" ]]; then
    echo
    NK_CLI="$build/cli/nodekeeper" "$build/bench/$b"
  fi
done
if [[ -x "$build/bench/task_events_bench" && -x "$build/bench/task_events_program" ]]; then
  echo
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" NK_TASKS_BENCH_PROGRAM="$build/bench/task_events_program" \
    NK_NULL_TASK_TOOL="$build/bench/libompt_null_task_tool.so" NK_LTTNG_TOOL="$build/bench/libompt_lttng_tool.so" \
    "$build/bench/task_events_bench"
fi
if [[ -x "$build/bench/recorder_pace_bench" && -x "$build/bench/uts_program" ]]; then
  echo
  # NK_RECORDER_DEPTH=44 for the 30 M-task figures (minutes).
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" NK_UTS_PROGRAM="$build/bench/uts_program" \
    NK_NULL_TASK_TOOL="$build/bench/libompt_null_task_tool.so" NK_CLOCK_TASK_TOOL="$build/bench/libompt_clock_task_tool.so" \
    NK_LTTNG_TOOL="$build/bench/libompt_lttng_tool.so" NK_CLI="$build/cli/nodekeeper" "$build/bench/recorder_pace_bench" --depth "${NK_RECORDER_DEPTH:-36}"
fi
if [[ -x "$build/bench/debug_bench" && -x "$build/bench/task_events_program" ]]; then
  echo
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" \
    NK_CLIENT_LIB_WITHOUT_GATE="$build/bench/libnodekeeper_without_gate.so" \
    NK_TASKS_BENCH_PROGRAM="$build/bench/task_events_program" \
    NK_TASKS_PROGRAM="$build/tests/integration/client/omp_tasks_clang" "$build/bench/debug_bench"
fi
if [[ -x "$build/bench/daemon_loss_bench" && -x "$build/bench/team_watch_program" ]]; then
  echo
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" NK_TEAM_WATCH_PROGRAM="$build/bench/team_watch_program" \
    "$build/bench/daemon_loss_bench"
fi
if [[ -x "$build/bench/pmpi/pmpi_overhead_bench" && -x "$build/bench/pmpi/pmpi_bench_program" ]]; then
  echo
  NK_PMPI_LIB="$build/pmpi-agent/libnodekeeper-pmpi.so" NK_PMPI_PROGRAM="$build/bench/pmpi/pmpi_bench_program" \
    "$build/bench/pmpi/pmpi_overhead_bench"
fi
# srun's start with and without the SPANK plugin: a one-node Slurm of its
# own, which needs root.
if [[ -x "$build/bench/slurm_start_bench" && $(id -u) -eq 0 ]]; then
  echo
  NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" NK_SPANK_PLUGIN="$build/slurm/nodekeeper_spank.so" \
    "$build/bench/slurm_start_bench"
fi
# Fault localisation: the tree's code in simulation at 1,000 and
# 10,000 nodes, then real daemons and MPI jobs on loopback addresses.
if [[ -x "$build/bench/faults/fault_tree_sim_bench" ]]; then
  echo
  "$build/bench/faults/fault_tree_sim_bench"
fi
if [[ -f "$(dirname "$0")/faults/fault_localisation_bench.py" ]]; then
  echo
  python3 "$(dirname "$0")/faults/fault_localisation_bench.py" --build "$build"
fi
# The browser page on 10k- and 100k-task sessions (headless Chromium).
if [[ -x "$build/tests/browser/kastors_jacobi" && -x /usr/bin/chromedriver ]] && /usr/bin/python3 -c 'import selenium' 2>/dev/null; then
  echo
  NK_DAEMON="$build/daemon/nodekeeperd" NK_CLI="$build/cli/nodekeeper" NK_CLIENT_LIB="$build/client-lib/libnodekeeper.so" \
    NK_JACOBI="$build/tests/browser/kastors_jacobi" /usr/bin/python3 "$(dirname "$0")/ui_page_bench.py"
fi
