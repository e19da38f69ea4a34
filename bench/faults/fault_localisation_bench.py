#!/usr/bin/env python3
"""Fault localisation on real daemons and real MPI jobs, over many trials.

  python3 bench/faults/fault_localisation_bench.py             # ~8 min on 2 cores
  python3 bench/faults/fault_localisation_bench.py --trials 2 --fault-free-runs 3
  python3 bench/faults/fault_localisation_bench.py --json > results.json

N emulated nodes on this machine: one nodekeeperd each (--emulate, its own
socket, node name n1..nN and peer address 127.0.1.(10+i) on one free port,
a shared peer token), and MPI jobs of mpi_check with one rank per node
(rank i-1 on node ni, LD_PRELOAD=libnodekeeper-pmpi.so). The fault tree's
root is n1 (the node of rank 0), fan-out 4 (the daemon's default): for 8
nodes n1 -> n2..n5 and n2 -> n6..n8. A `nodekeeper faults --watch --json`
on n1 is open for the whole run; every fault it prints is stamped with its
arrival time.

Scenarios (a fresh job, with its own id, per trial):
  fault-free  --fault-free-runs short `mpi_check alltoall 100` jobs, one
              after the other; each must exit 0. Every fault report n1
              prints from the first run until --settle s after the last is
              a false report (goal: none). Runs first, on fresh daemons, so
              nothing earlier can be mistaken for one.
  node crash  a `mpi_check hang 300 100` job; once every daemon has built
              the job's tree (its log line "job ID: fault tree of N
              nodes", then 0.7 s for the heartbeats), SIGKILL a leaf node's
              daemon and its rank (the leaves in turn). Expected: node_down
              of that node, with its rank. Goal: fault->report p50 < 1 s,
              p99 < 2 s.
  hang        as node crash, but SIGSTOP the leaf's rank. Expected:
              process_hang on that node naming its rank. Goal: within the
              PMPI agent's detection deadline plus 1 s. The deadline is
              NODEKEEPER_PMPI_DEADLINE_MS when set (--pmpi-deadline-ms
              passes it to the ranks), else adaptive, at least
              NODEKEEPER_PMPI_DEADLINE_FLOOR_MS (default 5000 ms,
              pmpi-agent/src/agent_options.h), and the goal takes the
              floor as the deadline. The rank stays stopped until the deadline plus
              1 s has passed (and --settle s after the report), so that
              the ranks' own response timeouts happen inside the window
              too; then SIGCONT.
  inner       as node crash, but kill n2 (an inner node: daemon and rank).
              Expected: node_down of n2 and nothing else (goal: only it
              blamed). Needs 6 nodes or more (n2 must have children).
              With --hold-past-deadline, node crash and inner trials too
              keep counting until the deadline plus 1 s after the kill.

fault->report is the fault's localised_ns (CLOCK_REALTIME at the daemon
that localised it; same host clock) minus time.time_ns() taken just before
the first kill(2). `watch` is the wall time at which the line reached the
watcher, minus the same. A trial is correct when the first report about its
job is the expected one; every other report about the job, from the job's
start until --settle s after the expected one (or until --timeout s after
the injection when it never came; for hang, at least until the deadline
plus 1 s), is a false report. Reports after that window come from tearing
the job down (its ranks are killed) and are not counted; --json lists them
per trial as `after_window`. `ended-job reports` counts the reports inside
a trial's window about other, earlier jobs, whose ranks are all gone (their
trees stay on the daemons for a while after): not part of any goal, but no
job that has ended should get one. p99 is the nearest-rank percentile: with
fewer than 100 trials it is the maximum. A trial that missed counts as an
infinite time in the goals. The goals are judged on fault->report; the same
limits on the watch times are printed beside them for information.

Killed daemons are restarted before the next trial, on a fresh --state-dir
(--keep-state-on-restart: on the old one; the emulated node then restores
its temperatures from the sysfs tree it left, a little hotter each time
under load, and after a dozen restarts in a row n2 reads over 95 C and
reports overheating); the others stay up.
Every process started here is stopped on exit (also on Ctrl-C, SIGTERM and
errors). Progress goes to stderr, one line per trial; the table (or JSON
with --json) to stdout. Exit status: 0 when the run completed (whatever the
goals say; --strict: 1 when a goal failed), 1 when it could not run.

Standard library only: it drives nodekeeperd, nodekeeper and mpirun.
"""

import argparse
import base64
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAN_OUT = 4  # nodekeeperd's --fault-tree-fan-out default
DEFAULT_DEADLINE_FLOOR_MS = 5000  # AgentOptions::deadline_floor (pmpi-agent/src/agent_options.h)
ADDR_PREFIX = "127.0.1."  # not 127.0.0.x: the integration tests use 127.0.0.11-18:7400

SCENARIOS = ("fault-free", "node-crash", "hang", "inner")
LABELS = {"fault-free": "fault-free", "node-crash": "node crash", "hang": "process hang", "inner": "inner node crash"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


class Terminated(BaseException):
    pass


def on_signal(signum, frame):
    raise Terminated(signum)


# ---------------------------------------------------------------- processes

class Reaper:
    """Every process this bench started, so that all are stopped on exit."""

    def __init__(self):
        self.procs = []

    def add(self, proc):
        self.procs.append(proc)
        return proc

    @staticmethod
    def stop(proc, grace=2.0):
        if proc.poll() is not None:
            return
        try:
            proc.terminate()
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            try:
                proc.kill()
                proc.wait(grace)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        except ProcessLookupError:
            pass

    def stop_all(self):
        for p in reversed(self.procs):
            self.stop(p)
        self.procs = [p for p in self.procs if p.poll() is None]


def children_of(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    out += [int(c) for c in f.read().split()]
            except OSError:
                pass
    except OSError:
        pass
    return out


def cmdline_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def free_port(hosts):
    """A TCP port free on every one of hosts."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind((hosts[0], 0))
            port = s.getsockname()[1]
        socks = []
        try:
            for h in hosts:
                s = socket.socket()
                socks.append(s)
                s.bind((h, port))
            return port
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise BenchError("no TCP port free on all of " + ", ".join(hosts))


# ---------------------------------------------------------------- the tree

def tree_children(index, n):
    first = FAN_OUT * index + 1
    return [c for c in range(first, min(first + FAN_OUT, n))]


def tree_parent(index):
    return None if index == 0 else (index - 1) // FAN_OUT


def leaves(n):
    """Nodes (1-based) with no children in the tree, the root excluded."""
    return [i + 1 for i in range(1, n) if not tree_children(i, n)]


# ---------------------------------------------------------------- cluster

class Cluster:
    def __init__(self, build, nodes, workdir, reaper, keep_state=False):
        self.build = build
        self.keep_state = keep_state
        self.n = nodes
        self.dir = workdir
        self.reaper = reaper
        self.daemon_bin = os.path.join(build, "daemon", "nodekeeperd")
        self.cli_bin = os.path.join(build, "cli", "nodekeeper")
        self.token = os.path.join(workdir, "token")
        self.hosts = [ADDR_PREFIX + str(10 + i) for i in range(1, nodes + 1)]
        self.port = free_port(self.hosts)
        self.daemons = {}
        self.restarts = 0
        with open(self.token, "w") as f:
            f.write(base64.b64encode(os.urandom(32)).decode() + "\n")
        os.chmod(self.token, 0o600)

    def sock(self, i):
        return os.path.join(self.dir, f"n{i}.sock")

    def logfile(self, i):
        return os.path.join(self.dir, f"d{i}.log")

    def endpoint(self, i):
        return f"{self.hosts[i - 1]}:{self.port}"

    def _spawn(self, i):
        state = os.path.join(self.dir, f"s{i}")
        os.makedirs(state, exist_ok=True)
        try:
            os.unlink(self.sock(i))  # left behind by a SIGKILLed daemon
        except FileNotFoundError:
            pass
        out = open(self.logfile(i), "ab")
        try:
            proc = subprocess.Popen(
                [self.daemon_bin, "--emulate", "--state-dir", state, "--socket", self.sock(i), "--node-name", f"n{i}",
                 "--listen", self.endpoint(i), "--peer-token", self.token],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            out.close()
        self.daemons[i] = self.reaper.add(proc)
        return proc

    def _wait_up(self, nodes, timeout=20.0):
        deadline = time.monotonic() + timeout
        for i in nodes:
            while not os.path.exists(self.sock(i)):
                if self.daemons[i].poll() is not None:
                    raise BenchError(f"nodekeeperd n{i} exited ({self.daemons[i].returncode}):\n" + self.tail(i))
                if time.monotonic() > deadline:
                    raise BenchError(f"nodekeeperd n{i}: no socket {self.sock(i)} after {timeout:.0f} s:\n" +
                                     self.tail(i))
                time.sleep(0.05)

    def start(self):
        for i in range(1, self.n + 1):
            self._spawn(i)
        self._wait_up(range(1, self.n + 1))

    def kill_daemon(self, i):
        proc = self.daemons[i]
        os.kill(proc.pid, signal.SIGKILL)

    def ensure_up(self):
        """Restarts every daemon that is not running (a trial killed it)."""
        dead = [i for i, p in self.daemons.items() if p.poll() is not None]
        for i in dead:
            self.daemons[i].wait()
            if not self.keep_state:  # see --keep-state-on-restart
                shutil.rmtree(os.path.join(self.dir, f"s{i}"), ignore_errors=True)
            self._spawn(i)
            self.restarts += 1
        if dead:
            self._wait_up(dead)
        return dead

    def tail(self, i, lines=15):
        try:
            with open(self.logfile(i), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def log_text(self, i):
        try:
            with open(self.logfile(i), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def cli(self, i, *args, timeout=10.0):
        r = subprocess.run([self.cli_bin, "--socket", self.sock(i), *args], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise BenchError(f"nodekeeper --socket {self.sock(i)} {' '.join(args)}: exit {r.returncode}: "
                             f"{r.stderr.strip()}")
        return r.stdout

    def rank_pid(self, i, job_id):
        jobs = json.loads(self.cli(i, "jobs", "--json")).get("jobs", [])
        for job in jobs:
            if job.get("job_id") != job_id:
                continue
            for rank in job.get("ranks", []):
                if rank.get("rank") == i - 1 and rank.get("pid"):
                    return int(rank["pid"])
        raise BenchError(f"n{i} lists no rank {i - 1} of job {job_id}")


# ---------------------------------------------------------------- fault watch

class FaultWatch:
    """`nodekeeper --socket n1.sock faults --watch --json`, restarted if it ends."""

    def __init__(self, cluster, reaper):
        self.cluster = cluster
        self.reaper = reaper
        self.cond = threading.Condition()
        self.faults = []  # (arrival_ns, record), in arrival order
        self.seen = set()
        self.proc = None
        self.restarts = 0
        self.errors = []
        self._start()

    def _start(self):
        self.proc = self.reaper.add(subprocess.Popen(
            [self.cluster.cli_bin, "--socket", self.cluster.sock(1), "faults", "--watch", "--json"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
            start_new_session=True))
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        threading.Thread(target=self._read_err, args=(self.proc,), daemon=True).start()

    def _read(self, proc):
        for line in iter(proc.stdout.readline, ""):
            arrival = time.time_ns()
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                with self.cond:
                    self.errors.append("not JSON: " + line[:200])
                continue
            key = (record.get("job_id"), record.get("fault_id"))
            with self.cond:
                if key in self.seen:  # printed again by a restarted watcher
                    continue
                self.seen.add(key)
                self.faults.append((arrival, record))
                self.cond.notify_all()

    def _read_err(self, proc):
        for line in iter(proc.stderr.readline, ""):
            if line.strip():
                with self.cond:
                    self.errors.append(line.strip())

    def check(self):
        """Restarts the watcher if it ended (n1's daemon is never killed)."""
        if self.proc.poll() is not None:
            self.restarts += 1
            self._start()
            time.sleep(0.3)

    def count(self):
        with self.cond:
            return len(self.faults)

    def since(self, start_index=0):
        with self.cond:
            return list(self.faults[start_index:])

    def wait_for(self, predicate, deadline_mono):
        """The first (arrival, record) satisfying predicate, or None at the deadline."""
        index = 0
        while True:
            with self.cond:
                while index < len(self.faults):
                    if predicate(*self.faults[index]):
                        return self.faults[index]
                    index += 1
                left = deadline_mono - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(min(left, 0.2))
            self.check()


# ---------------------------------------------------------------- jobs

class Job:
    def __init__(self, cluster, reaper, job_id, program_args, deadline_ms):
        self.cluster = cluster
        self.job_id = job_id
        self.out_path = os.path.join(cluster.dir, f"job-{job_id}.out")
        b = cluster.build
        mpi_check = os.path.join(b, "tests", "integration", "mpi", "mpi_check")
        agent = os.path.join(b, "pmpi-agent", "libnodekeeper-pmpi.so")
        args = ["mpirun", "--oversubscribe", "--bind-to", "none", "--enable-recovery"]
        for i in range(1, cluster.n + 1):
            if i > 1:
                args.append(":")
            args += ["-np", "1", "-x", f"NODEKEEPER_SOCKET={cluster.sock(i)}", "-x", f"NODEKEEPER_JOB_ID={job_id}",
                     "-x", f"LD_PRELOAD={agent}"]
            if deadline_ms:
                args += ["-x", f"NODEKEEPER_PMPI_DEADLINE_MS={deadline_ms}"]
            args += [mpi_check, *program_args]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_btl="self,vader")
        out = open(self.out_path, "wb")
        try:
            self.proc = reaper.add(subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                                    stderr=subprocess.STDOUT, env=env, start_new_session=True))
        finally:
            out.close()
        self.ranks = set()

    def output(self):
        try:
            with open(self.out_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _note_ranks(self):
        for pid in children_of(self.proc.pid):
            if "mpi_check" in cmdline_of(pid):
                self.ranks.add(pid)

    def wait_tree(self, timeout):
        """Until every daemon logged the job's tree of N nodes, then 0.7 s for the heartbeats."""
        needle = f"job {self.job_id}: fault tree of {self.cluster.n} nodes"
        pending = set(range(1, self.cluster.n + 1))
        deadline = time.monotonic() + timeout
        while pending:
            pending = {i for i in pending if needle not in self.cluster.log_text(i)}
            if not pending:
                break
            if self.proc.poll() is not None:
                raise BenchError(f"job {self.job_id}: mpirun exited ({self.proc.returncode}) before the tree was "
                                 f"built on {', '.join('n%d' % i for i in sorted(pending))}:\n" + self.output()[-2000:])
            if time.monotonic() > deadline:
                raise BenchError(f"job {self.job_id}: no fault tree after {timeout:.0f} s on " +
                                 ", ".join("n%d" % i for i in sorted(pending)))
            time.sleep(0.05)
        self._note_ranks()
        time.sleep(0.7)

    def stop(self):
        self._note_ranks()
        for pid in list(self.ranks):  # SIGCONT a stopped rank so that it can die of SIGTERM
            try:
                if "mpi_check" in cmdline_of(pid):
                    os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        Reaper.stop(self.proc, grace=3.0)
        time.sleep(0.05)
        for pid in self.ranks:  # mpirun kills its ranks; these are the ones it did not
            if "mpi_check" in cmdline_of(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


# ---------------------------------------------------------------- stats

def nearest_rank(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[max(0, math.ceil(p / 100.0 * len(v)) - 1)]


def fmt_s(v):
    if v is None:
        return "-"
    if v == math.inf:
        return "missed"
    return f"{v:.3f}"


def brief(record):
    ranks = ",".join(str(r) for r in record.get("ranks", []))
    return f"{record.get('kind')} {record.get('node')}" + (f" [{ranks}]" if ranks else "")


# ---------------------------------------------------------------- the bench

class Bench:
    def __init__(self, opts):
        self.o = opts
        self.reaper = Reaper()
        self.tag = f"{os.getpid()}"
        self.results = {}
        self.deadline_s = (opts.pmpi_deadline_ms or DEFAULT_DEADLINE_FLOOR_MS) / 1000.0
        self.cluster = None
        self.watch = None
        self.elapsed = {}
        self.binaries = {}
        self.workdir = None

    # -- setup
    def setup(self):
        o = self.o
        need = [os.path.join(o.build, "daemon", "nodekeeperd"), os.path.join(o.build, "cli", "nodekeeper"),
                os.path.join(o.build, "pmpi-agent", "libnodekeeper-pmpi.so"),
                os.path.join(o.build, "tests", "integration", "mpi", "mpi_check")]
        missing = [p for p in need if not os.path.exists(p)]
        if missing:
            raise BenchError("missing (build first: ninja -C " + o.build + "): " + ", ".join(missing))
        if not shutil.which("mpirun"):
            raise BenchError("mpirun not found (Debian: openmpi-bin)")
        self.binaries = {}
        for path in need:
            real = os.path.realpath(path)
            self.binaries[os.path.relpath(path, o.build)] = time.strftime(
                "%Y-%m-%d %H:%M:%S UTC", time.gmtime(os.stat(real).st_mtime))
        self.workdir = tempfile.mkdtemp(prefix="nk-faultbench-")
        os.chmod(self.workdir, 0o755)
        log(f"fault_localisation_bench: {o.nodes} nodes in {self.workdir}")
        self.cluster = Cluster(o.build, o.nodes, self.workdir, self.reaper, keep_state=o.keep_state_on_restart)
        log(f"  daemons on {self.cluster.hosts[0]}..{self.cluster.hosts[-1]}:{self.cluster.port}")
        self.cluster.start()
        self.watch = FaultWatch(self.cluster, self.reaper)
        time.sleep(0.3)

    def teardown(self):
        self.reaper.stop_all()
        if self.workdir and not self.o.keep_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        elif self.workdir:
            log(f"fault_localisation_bench: kept {self.workdir} (daemon logs d*.log, job output job-*.out)")

    # -- one trial with a fault
    def fault_trial(self, scenario, k, target, inject, expected_kind, hold_until_s=None, after=None):
        c, o = self.cluster, self.o
        c.ensure_up()
        self.watch.check()
        job_id = f"nkfb{self.tag}-{scenario}-{k}"
        trial = {"trial": k, "job_id": job_id, "target": f"n{target}", "expected": None, "correct": False,
                 "fault_to_report_s": None, "watch_s": None, "detected_after_s": None, "localised_by": None,
                 "evidence": None, "false_reports": [], "ended_job_reports": [], "error": None}
        job = Job(c, self.reaper, job_id, ["hang", "300", "100"], o.pmpi_deadline_ms)
        try:
            job.wait_tree(o.timeout + 30)
            rank_pid = c.rank_pid(target, job_id)
            trial["rank_pid"] = rank_pid
            expected = {"kind": expected_kind, "node": f"n{target}", "ranks": [target - 1]}
            trial["expected"] = expected
            t0 = time.time_ns()
            t0_mono = time.monotonic()
            try:
                inject(rank_pid)
            except OSError as e:
                raise BenchError(f"injecting the fault on n{target}: {e}")
            trial["injected_ns"] = t0

            def is_expected(arrival, r):  # one from before the injection is a false report
                return (arrival >= t0 and r.get("job_id") == job_id and r.get("kind") == expected["kind"] and
                        r.get("node") == expected["node"])

            hit = self.watch.wait_for(is_expected, t0_mono + o.timeout)
            if hit:
                arrival, rec = hit
                trial["fault_to_report_s"] = (int(rec.get("localised_ns", 0)) - t0) / 1e9
                trial["watch_s"] = (arrival - t0) / 1e9
                trial["detected_after_s"] = rec.get("detected_after_s")
                trial["localised_by"] = rec.get("localised_by")
                trial["evidence"] = (rec.get("evidence") or [None])[0]
                trial["reported_ranks"] = rec.get("ranks")
                end_mono = t0_mono + trial["watch_s"] + o.settle
            else:
                end_mono = t0_mono + o.timeout
            if hold_until_s is None and o.hold_past_deadline:
                hold_until_s = self.deadline_s + 1.0
            if hold_until_s is not None:
                end_mono = max(end_mono, t0_mono + hold_until_s)
            left = end_mono - time.monotonic()
            if left > 0:
                time.sleep(left)
            trial["window_end_ns"] = t0 + int((end_mono - t0_mono) * 1e9)
            about = [(a, r) for a, r in self.watch.since() if r.get("job_id") == job_id]
            in_window = [(a, r) for a, r in about if a <= trial["window_end_ns"]]
            first = in_window[0][1] if in_window else None
            trial["correct"] = bool(hit) and first is not None and first is hit[1] and \
                sorted(first.get("ranks", [])) == expected["ranks"]
            trial["false_reports"] = [dict(r, arrival_ns=a) for a, r in in_window if not (hit and r is hit[1])]
            trial["first_report"] = brief(first) if first else None
            trial["ended_job_reports"] = [dict(r, arrival_ns=a) for a, r in self.watch.since()
                                          if r.get("job_id") != job_id and t0 <= a <= trial["window_end_ns"]]
            # The ranks' own detection: response timeouts the agents reported (daemon log lines).
            waited = []
            pattern = re.compile(r"of job " + re.escape(job_id) + r": response_timeout reported by .*? after ([0-9.]+) s")
            for i in range(1, c.n + 1):
                waited += [float(m.group(1)) for m in pattern.finditer(c.log_text(i))]
            trial["response_timeouts"] = len(waited)
            trial["response_timeout_after_s"] = min(waited) if waited else None
        except BenchError as e:
            trial["error"] = str(e)
        finally:
            if after and trial.get("rank_pid"):
                after(trial["rank_pid"])
            job.stop()
        return trial

    def progress(self, label, k, n, trial):
        if trial.get("error"):
            log(f"[{label} {k}/{n}] {trial['job_id']}: ERROR {trial['error'].splitlines()[0]}")
            return
        what = trial.get("first_report") or "no report"
        t = trial["fault_to_report_s"]
        timing = (f"fault->report {t:.3f} s, watch {trial['watch_s']:.3f} s, by {trial['localised_by']}"
                  if t is not None else f"expected report missing after {self.o.timeout:.0f} s")
        log(f"[{label} {k}/{n}] {trial['job_id']}: {trial['target']}: first report {what} "
            f"({'correct' if trial['correct'] else 'WRONG'}); {timing}; false reports {len(trial['false_reports'])}"
            + (f"; about ended jobs {len(trial['ended_job_reports'])}" if trial["ended_job_reports"] else ""))

    def kill_node(self, target):
        """SIGKILL node target's daemon, then its rank: what a node crash does to them."""
        def inject(rank_pid):
            os.kill(self.cluster.daemons[target].pid, signal.SIGKILL)
            os.kill(rank_pid, signal.SIGKILL)
        return inject

    def run_node_crash(self):
        targets = leaves(self.o.nodes)
        trials = []
        for k in range(1, self.o.trials + 1):
            target = targets[(k - 1) % len(targets)]
            t = self.fault_trial("crash", k, target, self.kill_node(target), "node_down")
            trials.append(t)
            self.progress("node crash", k, self.o.trials, t)
        return trials

    def run_hang(self):
        targets = leaves(self.o.nodes)
        trials = []
        hold = self.deadline_s + 1.0
        for k in range(1, self.o.trials + 1):
            target = targets[(k - 1) % len(targets)]

            def stop(rank_pid):
                os.kill(rank_pid, signal.SIGSTOP)

            def cont(rank_pid):
                try:
                    os.kill(rank_pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass

            t = self.fault_trial("hang", k, target, stop, "process_hang", hold_until_s=hold, after=cont)
            trials.append(t)
            self.progress("hang", k, self.o.trials, t)
        return trials

    def run_inner(self):
        trials = []
        for k in range(1, self.o.trials + 1):
            t = self.fault_trial("inner", k, 2, self.kill_node(2), "node_down")
            trials.append(t)
            self.progress("inner node crash", k, self.o.trials, t)
        return trials

    def run_fault_free(self):
        o, c = self.o, self.cluster
        c.ensure_up()
        self.watch.check()
        start_index = self.watch.count()
        runs = []
        for k in range(1, o.fault_free_runs + 1):
            job_id = f"nkfb{self.tag}-ok-{k}"
            before = self.watch.count()
            t0 = time.monotonic()
            job = Job(c, self.reaper, job_id, ["alltoall", "100"], o.pmpi_deadline_ms)
            try:
                rc = job.proc.wait(o.timeout + 60)
            except subprocess.TimeoutExpired:
                rc = None
            elapsed = time.monotonic() - t0
            out = job.output()
            job.stop()
            ok = rc == 0 and "ok 100" in out
            run = {"run": k, "job_id": job_id, "exit": rc, "ok": ok, "elapsed_s": elapsed}
            if not ok:
                run["output"] = out[-2000:]
            runs.append(run)
            new = self.watch.since(before)
            log(f"[fault-free {k}/{o.fault_free_runs}] {job_id}: exit {rc if rc is not None else 'timeout'}"
                f"{'' if ok else ' (FAILED)'} in {elapsed:.2f} s; reports so far in this phase "
                f"{self.watch.count() - start_index} (+{len(new)}"
                + (": " + ", ".join(brief(r) for a, r in new[:3]) + (" ..." if len(new) > 3 else "") if new else "")
                + ")")
        time.sleep(o.settle)
        reports = [dict(r, arrival_ns=a) for a, r in self.watch.since(start_index)]
        return runs, reports

    # -- summary
    def summarise(self):
        o = self.o
        rows = []
        dl = self.deadline_s
        for name in SCENARIOS:
            if name not in self.results:
                continue
            res = self.results[name]
            if name == "fault-free":
                runs, reports = res["runs"], res["reports"]
                ok = sum(1 for r in runs if r["ok"])
                goals = [
                    {"goal": "every run exits 0", "value": f"{ok}/{len(runs)}", "pass": ok == len(runs)},
                    {"goal": "0 false reports", "value": str(len(reports)), "pass": len(reports) == 0},
                ]
                kinds = {}
                for r in reports:
                    kinds[r.get("kind")] = kinds.get(r.get("kind"), 0) + 1
                rows.append({"scenario": name, "label": LABELS[name], "trials": len(runs), "correct": ok,
                             "false_reports": len(reports), "false_by_kind": kinds, "ended_job_reports": None,
                             "p50_s": None, "p99_s": None, "max_s": None, "goals": goals})
                continue
            trials = res["trials"]
            lat = [t["fault_to_report_s"] for t in trials if t["fault_to_report_s"] is not None]
            watch = [t["watch_s"] for t in trials if t["watch_s"] is not None]
            with_misses = lat + [math.inf] * (len(trials) - len(lat))
            correct = sum(1 for t in trials if t["correct"])
            false = sum(len(t["false_reports"]) for t in trials)
            ended = sum(len(t["ended_job_reports"]) for t in trials)
            goals = [{"goal": "all correct", "value": f"{correct}/{len(trials)}", "pass": correct == len(trials)}]
            p50, p99 = nearest_rank(with_misses, 50), nearest_rank(with_misses, 99)
            mx = max(with_misses) if with_misses else None
            if name == "node-crash":
                goals.append({"goal": "p50 < 1 s", "value": fmt_s(p50), "pass": p50 is not None and p50 < 1.0})
                goals.append({"goal": "p99 < 2 s", "value": fmt_s(p99), "pass": p99 is not None and p99 < 2.0})
            elif name == "hang":
                goals.append({"goal": f"max <= deadline {dl:g} s + 1 s", "value": fmt_s(mx),
                              "pass": mx is not None and mx <= dl + 1.0})
            elif name == "inner":
                goals.append({"goal": "only n2 blamed (0 false reports)", "value": str(false), "pass": false == 0})
            wp50 = nearest_rank(watch + [math.inf] * (len(trials) - len(watch)), 50)
            wp99 = nearest_rank(watch + [math.inf] * (len(trials) - len(watch)), 99)
            if name == "node-crash":
                info = [{"goal": "watch p50 < 1 s", "value": fmt_s(wp50), "pass": wp50 is not None and wp50 < 1.0},
                        {"goal": "watch p99 < 2 s", "value": fmt_s(wp99), "pass": wp99 is not None and wp99 < 2.0}]
            elif name == "hang":
                wmax = max(watch + [math.inf] * (len(trials) - len(watch))) if trials else None
                info = [{"goal": f"watch max <= {dl:g} s + 1 s", "value": fmt_s(wmax),
                         "pass": wmax is not None and wmax <= dl + 1.0}]
            else:
                info = []
            rows.append({"scenario": name, "label": LABELS[name], "trials": len(trials), "correct": correct,
                         "false_reports": false, "ended_job_reports": ended, "watch_goals": info, "p50_s": p50, "p99_s": p99, "max_s": mx,
                         "watch_p50_s": nearest_rank(watch, 50), "watch_max_s": max(watch) if watch else None,
                         "goals": goals})
        return rows

    def print_table(self, rows, total_s):
        o = self.o
        head = ["scenario", "trials", "correct", "false reports", "ended-job reports", "fault->report p50 (s)",
                "p99 (s)", "max (s)",
                "watch p50 (s)", "watch max (s)", "goal", "result"]
        table = []
        for r in rows:
            goal = "; ".join(f"{g['goal']}" for g in r["goals"])
            verdict = " ".join(("PASS" if g["pass"] else "FAIL") for g in r["goals"])
            table.append([r["label"], str(r["trials"]), str(r["correct"]), str(r["false_reports"]),
                          "-" if r.get("ended_job_reports") is None else str(r["ended_job_reports"]),
                          fmt_s(r["p50_s"]), fmt_s(r["p99_s"]), fmt_s(r["max_s"]), fmt_s(r.get("watch_p50_s")),
                          fmt_s(r.get("watch_max_s")), goal, verdict])
        widths = [max(len(h), *(len(row[i]) for row in table)) if table else len(h) for i, h in enumerate(head)]
        right = {1, 2, 3, 4, 5, 6, 7, 8, 9}

        def line(cells):
            return "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                             for i, c in enumerate(cells)).rstrip()

        print(f"Fault localisation: {o.nodes} emulated nodes (nodekeeperd --emulate), one MPI rank each, "
              f"fault tree fan-out {FAN_OUT} rooted at n1; {o.trials} trials per fault, "
              f"{o.fault_free_runs} fault-free runs")
        print(f"build {o.build}: nodekeeperd built {self.binaries.get('daemon/nodekeeperd')}, "
              f"PMPI agent {self.binaries.get('pmpi-agent/libnodekeeper-pmpi.so')}")
        print(line(head))
        print(line(["-" * w for w in widths]))
        for row in table:
            print(line(row))
        print()
        print("goals:")
        for r in rows:
            for g in r["goals"]:
                print(f"  {r['label']:<17} {g['goal']:<34} {g['value']:>9}  {'PASS' if g['pass'] else 'FAIL'}")
            for g in r.get("watch_goals", []):
                print(f"  {r['label']:<17} {g['goal']:<34} {g['value']:>9}  ({'pass' if g['pass'] else 'fail'}; "
                      f"not in the result)")
        print()
        dl_how = (f"NODEKEEPER_PMPI_DEADLINE_MS={o.pmpi_deadline_ms}" if o.pmpi_deadline_ms else
                  f"adaptive, floor NODEKEEPER_PMPI_DEADLINE_FLOOR_MS default {DEFAULT_DEADLINE_FLOOR_MS} ms")
        print(f"PMPI detection deadline: {self.deadline_s:g} s ({dl_how}); hang goal: within {self.deadline_s + 1:g} s")
        print("fault->report: the fault's localised_ns minus the injection; watch: when its line reached "
              "`nodekeeper faults --watch` on n1, minus the injection")
        hang = self.results.get("hang")
        if hang:
            seen = [t["response_timeout_after_s"] for t in hang["trials"] if t.get("response_timeout_after_s")]
            if seen:
                print(f"process hang: the ranks' agents reported response timeouts (the PMPI deadline) in "
                      f"{len(seen)} of {len(hang['trials'])} trials, the first after {min(seen):.1f}-{max(seen):.1f} s")
            ev = {}
            for t in hang["trials"]:
                if t.get("evidence"):
                    ev[t["evidence"].split(":")[0]] = ev.get(t["evidence"].split(":")[0], 0) + 1
            if ev:
                print("process hang: first evidence: " + "; ".join(f"{k} ({v}x)" for k, v in ev.items()))
        ff = next((r for r in rows if r["scenario"] == "fault-free"), None)
        if ff and ff["false_reports"]:
            print("fault-free: false reports by kind: " +
                  ", ".join(f"{k} {v}" for k, v in sorted(ff["false_by_kind"].items())))
        for name in ("node-crash", "hang", "inner"):
            res = self.results.get(name)
            if not res:
                continue
            errors = [t for t in res["trials"] if t.get("error")]
            if errors:
                print(f"{LABELS[name]}: {len(errors)} trial(s) failed to set up, e.g.: "
                      + errors[0]["error"].splitlines()[0])
            wrong = {}
            for t in res["trials"]:
                for f in t["false_reports"]:
                    wrong[brief(f)] = wrong.get(brief(f), 0) + 1
            if wrong:
                print(f"{LABELS[name]}: false reports: " + ", ".join(f"{k} ({v}x)" for k, v in sorted(wrong.items())))
            stale = {}
            for t in res["trials"]:
                for f in t["ended_job_reports"]:
                    stale[brief(f)] = stale.get(brief(f), 0) + 1
            if stale:
                print(f"{LABELS[name]}: reports about earlier, ended jobs inside the trials' windows: " +
                      ", ".join(f"{k} ({v}x)" for k, v in sorted(stale.items())))
        if self.cluster.restarts:
            print(f"daemons restarted after trials: {self.cluster.restarts}")
        if self.watch.restarts:
            print(f"fault watcher restarted: {self.watch.restarts} time(s)")
        print("p99 is nearest-rank (the maximum below 100 trials); a missed fault counts as infinite.")
        if self.watch.errors:
            print("fault watcher said: " + " | ".join(self.watch.errors[:5]))
        print("time per scenario: " + ", ".join(f"{LABELS[k]} {v:.0f} s" for k, v in self.elapsed.items()))
        print(f"total run time: {total_s:.1f} s")

    def run(self):
        o = self.o
        started = time.monotonic()
        self.setup()
        setup_s = time.monotonic() - started
        self.elapsed = {}
        wanted = o.scenarios
        if "inner" in wanted and not tree_children(1, o.nodes):
            log(f"inner: skipped: n2 has no children with {o.nodes} nodes (needs 6 or more)")
            wanted = [s for s in wanted if s != "inner"]
        if not leaves(o.nodes):
            wanted = [s for s in wanted if s not in ("node-crash", "hang")]
        for name in SCENARIOS:
            if name not in wanted:
                continue
            if name == "fault-free":
                runs, reports = self.run_fault_free()
                self.results[name] = {"runs": runs, "reports": reports}
            elif name == "node-crash":
                self.results[name] = {"trials": self.run_node_crash()}
            elif name == "hang":
                self.results[name] = {"trials": self.run_hang()}
            elif name == "inner":
                self.results[name] = {"trials": self.run_inner()}
            self.elapsed[name] = time.monotonic() - started - sum(self.elapsed.values()) - setup_s
        # Reports about the trials' jobs after their windows: the job's teardown.
        time.sleep(0.5)
        everything = self.watch.since()
        for name in ("node-crash", "hang", "inner"):
            for t in self.results.get(name, {}).get("trials", []):
                end = t.get("window_end_ns")
                t["after_window"] = [brief(r) for a, r in everything
                                     if r.get("job_id") == t["job_id"] and end is not None and a > end]
        total = time.monotonic() - started
        rows = self.summarise()
        doc = {
            "nodes": o.nodes, "fan_out": FAN_OUT, "trials": o.trials, "fault_free_runs": o.fault_free_runs,
            "settle_s": o.settle, "timeout_s": o.timeout, "pmpi_deadline_s": self.deadline_s,
            "pmpi_deadline_fixed": bool(o.pmpi_deadline_ms), "hold_past_deadline": o.hold_past_deadline,
            "total_s": total, "elapsed_s": self.elapsed, "build": o.build, "binaries_built": self.binaries,
            "endpoints": [self.cluster.endpoint(i) for i in range(1, o.nodes + 1)],
            "summary": [{k: (None if v == math.inf else v) for k, v in r.items()} for r in rows],
            "scenarios": self.results, "watch_errors": self.watch.errors,
            "daemon_restarts": self.cluster.restarts, "watch_restarts": self.watch.restarts,
            "pass": all(g["pass"] for r in rows for g in r["goals"]),
        }
        if o.json_file:
            with open(o.json_file, "w") as f:
                json.dump(doc, f, indent=1, default=str)
                f.write("\n")
        if o.json:
            json.dump(doc, sys.stdout, indent=1, default=str)
            print()
        else:
            self.print_table(rows, total)
        log(f"fault_localisation_bench: total run time {total:.1f} s")
        return all(g["pass"] for r in rows for g in r["goals"])


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Fault localisation on real nodekeeperd daemons (emulated nodes on this machine) and real MPI "
                    "jobs: node crash, process hang, inner node crash and fault-free runs, many trials each; prints "
                    "correctness, false reports and fault->report times against the goals.",
        epilog="Needs mpirun (Open MPI) and a build with the daemon, the CLI, the PMPI agent and "
               "tests/integration/mpi/mpi_check. About 8 minutes at the defaults on 2 cores.")
    p.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (default: %(default)s)")
    p.add_argument("--nodes", type=int, default=8, help="emulated nodes, one rank each (default: %(default)s)")
    p.add_argument("--trials", type=int, default=20, help="trials per fault scenario (default: %(default)s)")
    p.add_argument("--fault-free-runs", type=int, default=100,
                   help="fault-free alltoall jobs (default: %(default)s)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS),
                   help="comma-separated subset of " + ",".join(SCENARIOS) + " (default: all)")
    p.add_argument("--settle", type=float, default=2.0,
                   help="seconds after the expected report in which any other report is false (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds after the injection before the expected report counts as missed "
                        "(default: %(default)s)")
    p.add_argument("--hold-past-deadline", action="store_true",
                   help="node crash and inner: keep counting false reports until the PMPI deadline plus 1 s after "
                        "the kill (as the hang trials always do), so that the ranks' response timeouts fall inside")
    p.add_argument("--pmpi-deadline-ms", type=int, default=0,
                   help="pass NODEKEEPER_PMPI_DEADLINE_MS to the ranks (default: unset, the agent's adaptive deadline "
                        f"with its {DEFAULT_DEADLINE_FLOOR_MS} ms floor)")
    p.add_argument("--keep-state-on-restart", action="store_true",
                   help="restart a killed daemon on its old --state-dir (default: a fresh one; the emulated node "
                        "restores its temperatures from it and heats up a little more at every restart)")
    p.add_argument("--json", action="store_true", help="print JSON (summary and every trial) instead of the table")
    p.add_argument("--json-file", metavar="FILE", help="also write the JSON to FILE")
    p.add_argument("--keep-dir", action="store_true", help="keep the work directory (daemon logs, job output)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a goal fails")
    o = p.parse_args(argv)
    o.build = os.path.abspath(o.build)
    o.scenarios = [s.strip() for s in o.scenarios.split(",") if s.strip()]
    bad = [s for s in o.scenarios if s not in SCENARIOS]
    if bad:
        p.error("unknown scenario(s): " + ", ".join(bad))
    if not 2 <= o.nodes <= 240:
        p.error("--nodes must be 2 to 240")
    if o.trials < 1 or o.fault_free_runs < 0:
        p.error("--trials must be at least 1, --fault-free-runs at least 0")
    if o.pmpi_deadline_ms < 0:
        p.error("--pmpi-deadline-ms must be positive")
    return o


def main(argv):
    opts = parse_args(argv)
    bench = Bench(opts)
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    # Even when started in the background by a shell, which ignores SIGINT there.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        ok = bench.run()
        return 1 if (opts.strict and not ok) else 0
    except BenchError as e:
        log(f"fault_localisation_bench: {e}")
        return 1
    except (KeyboardInterrupt, Terminated):
        log("fault_localisation_bench: interrupted; stopping its processes")
        return 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        bench.teardown()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
