#!/usr/bin/env bash
# run_benchmarks.sh BUILD_DIR [ARGS...]: every benchmark, one table each.
set -euo pipefail
build=$1
shift
export NK_DAEMON="$build/daemon/nodekeeperd" NK_CLI="$build/cli/nodekeeper"
"$build/bench/telemetry_bench" "$@"
