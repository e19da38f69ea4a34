#!/bin/sh
# run_fuzzer.sh FUZZER SEED_DIR SECONDS
# Runs a libFuzzer target for a bounded time on a scratch copy of its seed
# corpus, so the run leaves the source tree untouched. A crash fails the test
# (and leaves the crashing input in the current directory).
set -eu
fuzzer=$(realpath "$1") seeds=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
if [ -d "$seeds" ]; then cp -r "$seeds"/. "$work/corpus/"; fi
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=1024 -print_final_stats=1 "$work/corpus"
