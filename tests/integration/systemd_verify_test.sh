#!/bin/sh
# Checks the configured nodekeeperd.service with `systemd-analyze verify`.
#
# usage: systemd_verify_test.sh UNIT_FILE NODEKEEPERD_BINARY
#
# verify insists that ExecStart= names an existing executable, and the
# configured unit points at the install location, so a copy with ExecStart=
# rewritten to the built binary is verified instead. Fails on any warning or
# error about our unit; systemd-analyze also loads the host's units and may
# complain about those, so only lines that mention nodekeeperd count.
# Exits 77 (skipped) when systemd-analyze is missing or cannot run here.
set -u

if [ $# -ne 2 ]; then
    echo "usage: $0 UNIT_FILE NODEKEEPERD_BINARY" >&2
    exit 2
fi
unit=$1
binary=$2

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "SKIP: systemd-analyze not found"
    exit 77
fi
if [ ! -f "$unit" ]; then
    echo "FAIL: unit file $unit does not exist" >&2
    exit 1
fi
if [ ! -x "$binary" ]; then
    echo "FAIL: $binary is not an executable (build nodekeeperd first)" >&2
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nk-verify.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# Keep the unit's own name: verify derives the unit name from the file name.
copy="$tmp/nodekeeperd.service"
sed "s|^ExecStart=[^ ]*|ExecStart=$binary|" "$unit" >"$copy" || exit 1
if ! grep -q "^ExecStart=$binary" "$copy"; then
    echo "FAIL: $unit has no ExecStart= line to rewrite" >&2
    exit 1
fi

# --man=no: the Documentation= man pages need not be installed to verify.
# notice level: quiet about the manager's own start-up (it runs without
# being PID 1 here) but still shows every parse warning.
output=$(SYSTEMD_LOG_LEVEL=notice SYSTEMD_LOG_COLOR=0 systemd-analyze verify --man=no "$copy" 2>&1)
status=$?

ours=$(printf '%s\n' "$output" | grep 'nodekeeperd' || true)
if [ -n "$ours" ]; then
    echo "FAIL: systemd-analyze verify reports problems with the unit:" >&2
    printf '%s\n' "$ours" >&2
    exit 1
fi
if [ $status -ne 0 ]; then
    # A non-zero exit that names no line of ours means systemd-analyze
    # itself could not run (e.g. no usable manager in this container).
    echo "SKIP: systemd-analyze verify could not run here (exit $status):"
    printf '%s\n' "$output"
    exit 77
fi

echo "PASS: $unit verifies cleanly (ExecStart=$binary)"
exit 0
