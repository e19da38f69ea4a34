#!/bin/sh
# run_fuzzer.sh FUZZER SEED_DIR SECONDS
# Runs a libFuzzer target for a bounded time on a scratch copy of its seed
# corpus, so the run leaves the source tree untouched. A crash fails the test;
# the crashing input is kept in the current directory (crash-*) and the end of
# the fuzzer's log is printed. libFuzzer's progress lines go to a log file, as
# they would drown the test log.
set -u
fuzzer=$(realpath "$1") seeds=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
if [ -d "$seeds" ]; then cp -r "$seeds"/. "$work/corpus/"; fi
if "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=1024 -print_final_stats=1 \
    -artifact_prefix="$(pwd)/" "$work/corpus" >"$work/log" 2>&1; then
  grep -E '^(stat::|Done)' "$work/log"
else
  tail -n 40 "$work/log"
  exit 1
fi
