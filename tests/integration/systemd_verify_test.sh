#!/bin/sh
# Checks nodekeeperd.service as `meson install` installs it, with
# `systemd-analyze verify` and `systemd-analyze security`.
#
# usage: systemd_verify_test.sh UNIT_FILE NODEKEEPERD_BINARY INSTALLED_BINARY UNIT_DIR MAX_EXPOSURE [DOC...]
#
# UNIT_FILE is the configured unit, which meson installs unchanged into
# UNIT_DIR; NODEKEEPERD_BINARY is the built daemon, which meson installs as
# INSTALLED_BINARY; DOC... are the absolute paths of the documents meson
# installs. verify insists that ExecStart= names an existing executable, so
# the unit is verified byte for byte inside a scratch root (--root): the unit
# in UNIT_DIR, the built binary at INSTALLED_BINARY (a unit that starts
# anything else fails), and a copy of the host's system units for the targets
# it depends on. Man pages are checked (no --man=no): a Documentation= page
# that is not installed fails. A file:// Documentation= must be one of DOC.
# Any line verify prints about the unit fails the test, and so does a non-zero
# exit. The same installed unit's overall exposure level (`systemd-analyze
# security --offline`, 0.0 to 10.0, lower is tighter) must not exceed
# MAX_EXPOSURE (one decimal, e.g. 2.0): a hardening setting dropped or
# loosened fails the test. Exits 77 (skipped) when systemd-analyze is missing
# or cannot start its manager or analyse offline here.
set -u

if [ $# -lt 5 ]; then
    echo "usage: $0 UNIT_FILE NODEKEEPERD_BINARY INSTALLED_BINARY UNIT_DIR MAX_EXPOSURE [DOC...]" >&2
    exit 2
fi
unit=$1
binary=$2
exec_path=$3
unit_dir=$4
max_exposure=$5
shift 5

# systemd-analyze's --threshold= counts tenths (0 to 100).
case $max_exposure in
    [0-9].[0-9]|10.0) threshold=$(echo "$max_exposure" | tr -d .) ;;
    *) echo "FAIL: MAX_EXPOSURE '$max_exposure' is not a level from 0.0 to 10.0 with one decimal" >&2; exit 2 ;;
esac
threshold=${threshold#0}

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
for dir in "$unit_dir" "$exec_path"; do
    case $dir in
        /*) ;;
        *) echo "FAIL: $dir is not an absolute path" >&2; exit 1 ;;
    esac
done

# Documentation=: every file:// URL must name a document meson installs.
docs=$(sed -n 's/^Documentation=//p' "$unit")
if [ -z "$docs" ]; then
    echo "FAIL: $unit has no Documentation= line" >&2
    exit 1
fi
for url in $docs; do
    case $url in
        file://*)
            path=${url#file://}
            found=no
            for installed in "$@"; do
                [ "$path" = "$installed" ] && found=yes
            done
            if [ $found = no ]; then
                echo "FAIL: Documentation=$url names a file the project does not install (it installs: $*)" >&2
                exit 1
            fi
            ;;
    esac
done

host_units=
for dir in /usr/lib/systemd/system /lib/systemd/system; do
    if [ -f "$dir/sysinit.target" ]; then
        host_units=$dir
        break
    fi
done
if [ -z "$host_units" ]; then
    echo "SKIP: no system units on this host (sysinit.target) to verify against"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nk-verify.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
root=$tmp/root
mkdir -p "$root/usr/lib/systemd" "$root$unit_dir" "$root$(dirname "$exec_path")" || exit 1
cp -R "$host_units" "$root/usr/lib/systemd/system" || exit 1
# The installed path must hold an executable; a hard link spares a copy.
ln "$binary" "$root$exec_path" 2>/dev/null || cp "$binary" "$root$exec_path" || exit 1
# ExecReload= runs the system's kill, which the OS provides, not nodekeeper.
mkdir -p "$root/bin" && cp /bin/kill "$root/bin/kill" || exit 1
installed_unit="$root$unit_dir/nodekeeperd.service"
cp "$unit" "$installed_unit" || exit 1

# notice level: quiet about the manager's own start-up (it runs without
# being PID 1 here) but still shows every parse warning.
output=$(SYSTEMD_LOG_LEVEL=notice SYSTEMD_LOG_COLOR=0 systemd-analyze verify --root="$root" "$installed_unit" 2>&1)
status=$?

ours=$(printf '%s\n' "$output" | grep 'nodekeeperd' || true)
if [ -n "$ours" ]; then
    echo "FAIL: systemd-analyze verify reports problems with the unit as installed:" >&2
    printf '%s\n' "$ours" >&2
    exit 1
fi
if [ $status -ne 0 ]; then
    case $output in
        *"Failed to initialize manager"*|*"unrecognized option"*)
            echo "SKIP: systemd-analyze verify could not run here (exit $status):"
            printf '%s\n' "$output"
            exit 77
            ;;
    esac
    echo "FAIL: systemd-analyze verify exited with $status:" >&2
    printf '%s\n' "$output" >&2
    exit 1
fi

# The exposure level of the same installed unit. --threshold= makes the exit
# status say whether it is over; the level itself is read from the last line
# to report it.
output=$(SYSTEMD_LOG_LEVEL=notice SYSTEMD_LOG_COLOR=0 systemd-analyze security --no-pager --offline=true \
    --root="$root" --threshold="${threshold:-0}" "$installed_unit" 2>&1)
status=$?
level=$(printf '%s\n' "$output" | sed -n 's/.*Overall exposure level for nodekeeperd\.service: \([0-9][0-9.]*\).*/\1/p')
if [ -z "$level" ]; then
    case $output in
        *"unrecognized option"*|*"Unknown command"*)
            echo "SKIP: the unit verifies, but systemd-analyze security --offline cannot run here:"
            printf '%s\n' "$output"
            exit 77
            ;;
    esac
    echo "FAIL: systemd-analyze security printed no exposure level for the unit (exit $status):" >&2
    printf '%s\n' "$output" >&2
    exit 1
fi
if [ $status -ne 0 ]; then
    echo "FAIL: the unit's exposure level is $level, over the allowed $max_exposure; what it is exposed to:" >&2
    printf '%s\n' "$output" | grep '✗' >&2
    exit 1
fi

echo "PASS: $unit verifies cleanly as installed in $unit_dir (ExecStart=$exec_path); exposure level $level (at most $max_exposure)"
exit 0
