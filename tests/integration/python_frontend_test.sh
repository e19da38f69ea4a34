#!/bin/bash
# The Python debugger frontend (examples/python-debugger/nk_debugger.py)
# against a real daemon: a frontend nodekeeper did not write in C++ attaches
# to an OpenMP task program started held, blocks one of its tasks, lets the
# rest run, unblocks it, and the task must start only after the unblock.
#
# Environment (meson sets it):
#   NK_DAEMON          nodekeeperd
#   NK_CLIENT_LIB      libnodekeeper.so (the OMPT tool)
#   NK_TASKS_PROGRAM   omp_tasks_clang
#   NK_PY_DEBUGGER     nk_debugger.py
#   NK_PYTHON          a python3 with grpc and protobuf ("" : none found, skip)
#   NODEKEEPER_PY_STUBS  the generated tasks_pb2.py / tasks_pb2_grpc.py
#
# Two runs: the real one (--continue: it must pass, exit 0, and the output
# must show the task blocked, the others finishing, then the task starting
# after the unblock), and a control without --continue, where the held
# program never runs the task, which the frontend must report as a failure
# (exit 1): proof that its verdict is not always "pass".
# Exits 77 (skipped) without a Python that has grpc.
set -u

fail() { echo "FAIL: $*" >&2; exit 1; }

for var in NK_DAEMON NK_CLIENT_LIB NK_TASKS_PROGRAM NK_PY_DEBUGGER NODEKEEPER_PY_STUBS; do
    [ -n "${!var:-}" ] || fail "$var is not set (run it through meson test)"
done
python=${NK_PYTHON:-}
if [ -z "$python" ] || ! "$python" -c 'import grpc, google.protobuf' 2>/dev/null; then
    echo "SKIP: no python3 with grpc and protobuf (Debian: python3-grpcio python3-protobuf)"
    exit 77
fi
[ -x "$NK_DAEMON" ] || fail "$NK_DAEMON is not an executable"
[ -x "$NK_TASKS_PROGRAM" ] || fail "$NK_TASKS_PROGRAM is not an executable"
[ -f "$NK_CLIENT_LIB" ] || fail "$NK_CLIENT_LIB does not exist"
[ -f "$NODEKEEPER_PY_STUBS/tasks_pb2_grpc.py" ] || fail "no stubs in $NODEKEEPER_PY_STUBS"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nk-pyfront.XXXXXX") || exit 1
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

socket=$tmp/s.sock
"$NK_DAEMON" --emulate --state-dir "$tmp/state" --socket "$socket" --config /dev/null >"$tmp/daemon.log" 2>&1 &
daemon=$!
pids+=("$daemon")
for _ in $(seq 200); do
    [ -S "$socket" ] && break
    kill -0 "$daemon" 2>/dev/null || { cat "$tmp/daemon.log" >&2; fail "nodekeeperd exited at start"; }
    sleep 0.05
done
[ -S "$socket" ] || { cat "$tmp/daemon.log" >&2; fail "nodekeeperd did not create $socket within 10 s"; }

# 200 tasks spinning 2 ms each on 2 threads, held at start until a frontend
# sends continue.
start_program() {  # start_program NAME: sets $program
    OMP_TOOL_LIBRARIES=$NK_CLIENT_LIB NODEKEEPER_TASKS=lossless NODEKEEPER_SOCKET=$socket \
        OMP_NUM_THREADS=2 NODEKEEPER_BREAK_AT_START=1 \
        "$NK_TASKS_PROGRAM" steady 200 2000 >"$tmp/$1.out" 2>"$tmp/$1.err" &
    program=$!
    pids+=("$program")
}
show() {  # show FILE...: for the log of a failure
    local f
    for f in "$@"; do echo "--- $f" >&2; tail -n 60 "$f" >&2; done
}

# --- The real run.
start_program run
timeout 90 "$python" "$NK_PY_DEBUGGER" --socket "$socket" --pid "$program" --wait-s 20 \
    --block 5 --continue --unblock-after-s 1.5 --json >"$tmp/debugger.jsonl" 2>"$tmp/debugger.err"
rc=$?
if [ "$rc" -ne 0 ]; then
    show "$tmp/debugger.jsonl" "$tmp/debugger.err" "$tmp/run.err" "$tmp/daemon.log"
    fail "nk_debugger.py exited $rc (0 expected)"
fi
# The program runs to its end once the task is unblocked.
for _ in $(seq 300); do kill -0 "$program" 2>/dev/null || break; sleep 0.1; done
kill -0 "$program" 2>/dev/null && fail "the program still runs 30 s after the frontend unblocked its task"
wait "$program"
prc=$?
[ "$prc" -eq 0 ] || { show "$tmp/run.out" "$tmp/run.err"; fail "the program exited $prc"; }
grep -q '^tasks=200$' "$tmp/run.out" || { show "$tmp/run.out"; fail "the program did not run its 200 tasks"; }

# What the output must show, in order: the block acknowledged; while blocked,
# the task in every status' blocked list, other tasks finishing and no start
# of the task; its start (and end) only after the unblock; the verdict.
"$python" - "$tmp/debugger.jsonl" <<'EOF' || { show "$tmp/debugger.jsonl"; fail "the frontend's output does not show the block working"; }
import json, sys

lines = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
def first(pred, what):
    for i, rec in enumerate(lines):
        if pred(rec):
            return i, rec
    sys.exit(f"no {what} in the output")

_, attached = first(lambda r: r["type"] == "attached", "attach acknowledgement")
i_status, status = first(lambda r: r["type"] == "status", "first status")
assert status["held"], "the program was not held at start"
assert status["finished"] == 0, f"tasks finished before the frontend blocked one: {status}"
i_block, block = first(lambda r: r["type"] == "ack" and r["command"].startswith("block "), "block ack")
task = int(block["command"].split()[1])
assert block["ok"], f"block refused: {block}"
assert task == status["ready"][4], f"blocked {task}, not the 5th ready task {status['ready'][4]}"
i_cont, cont = first(lambda r: r["type"] == "ack" and r["command"] == "continue", "continue ack")
assert cont["ok"], f"continue refused: {cont}"
i_blocked, blocked = first(lambda r: r["type"] == "blocked", "summary of the blocked phase")
i_unblock, unblock = first(lambda r: r["type"] == "ack" and r["command"].startswith("unblock "), "unblock ack")
assert unblock["ok"], f"unblock refused: {unblock}"
_, result = first(lambda r: r["type"] == "result", "verdict")
assert i_status < i_block < i_cont < i_blocked < i_unblock, "the steps came out of order"

polls = [r for r in lines[i_cont:i_blocked] if r["type"] == "poll"]
assert len(polls) >= 3, f"only {len(polls)} status polls while blocked"
for p in polls:
    assert task in p["blocked"], f"task {task} missing from a status while blocked: {p}"
assert polls[-1]["finished"] >= 150, f"the other tasks did not run on while one was blocked: {polls[-1]}"
assert not blocked["started"], "the frontend saw the task start while blocked"
assert blocked["others_finished"] >= 150, f"others finished while blocked: {blocked['others_finished']}"

def events(kind, lo=0, hi=len(lines)):
    return [r for r in lines[lo:hi] if r["type"] == "event" and r["event"] == kind and r.get("task") == task]
assert events("created"), f"no created event for task {task}"
assert not events("started", 0, i_blocked), f"task {task} started before the unblock"
started = events("started", i_blocked)
assert len(started) == 1, f"task {task} started {len(started)} times after the unblock"
assert events("finished", i_blocked), f"task {task} did not finish"
others = [r for r in lines[i_cont:i_blocked] if r["type"] == "event" and r["event"] == "started"]
assert len(others) >= 150, f"only {len(others)} other tasks started while one was blocked"
assert result["ok"] and result["task"] == task, f"verdict: {result}"
assert result["started_after_unblock_ms"] is not None and result["started_after_unblock_ms"] > -2.0, result
print(f"ok: task {task} blocked {blocked['blocked_for_s']} s while {blocked['others_finished']} others "
      f"finished; started {result['started_after_unblock_ms']} ms after the unblock")
EOF

# --- The control: no --continue, so the held program runs nothing; the
# frontend must not call that a pass.
start_program control
timeout 60 "$python" "$NK_PY_DEBUGGER" --socket "$socket" --pid "$program" --wait-s 20 \
    --block 1 --unblock-after-s 0.3 --finish-timeout-s 1 --event-wait-s 0.3 >"$tmp/control.txt" 2>&1
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "^FAIL: task [0-9]* never started after the unblock" "$tmp/control.txt"; then
    show "$tmp/control.txt"
    fail "the control run (nothing may start) exited $rc, not 1 with 'never started'"
fi
grep -q "^ack block [0-9]*: ok" "$tmp/control.txt" || { show "$tmp/control.txt"; fail "control: no block ack"; }
echo "ok: without --continue the frontend reports the task never started (exit 1)"
echo "PASS"
