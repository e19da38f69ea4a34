#!/usr/bin/env python3
"""A small debugger frontend for nodekeeperd's TasksService, in Python.

It attaches to a task session over TasksService.Debug, prints the task graph
live as the program runs, blocks one task, checks that the task does not start
while it is blocked (the other tasks run on), unblocks it and checks that it
starts then. Proof that the gRPC API serves frontends that are not nodekeeper's
own C++ CLI: it uses only the .proto file, grpcio and protobuf.

    nk_debugger.py --socket /tmp/nk/s.sock --pid 1234 --block 3 --continue

Exit status: 0 the blocked task started after the unblock and not before;
1 it did not (or a command was refused); 2 usage; 3 nodekeeperd unreachable;
4 no such session; 5 permission denied; 6 grpc/protobuf or stubs missing.
"""

import argparse
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_NO_SESSION = 4
EXIT_PERMISSION = 5
EXIT_SETUP = 6

PROG = "nk_debugger"
HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import grpc
    import google.protobuf  # noqa: F401  (the generated stubs need it)
except ImportError as missing:
    # A Python of its own (pyenv, a venv) may come first in PATH; Debian's
    # python3-grpcio lives with /usr/bin/python3.
    system_python = "/usr/bin/python3"
    if (os.environ.get("NK_DEBUGGER_REEXEC") != "1" and os.access(system_python, os.X_OK)
            and os.path.realpath(sys.executable) != os.path.realpath(system_python)):
        os.environ["NK_DEBUGGER_REEXEC"] = "1"
        os.execv(system_python, [system_python, os.path.abspath(__file__)] + sys.argv[1:])
    sys.stderr.write(f"{PROG}: {missing}: install python3-grpcio and python3-protobuf "
                     "(Debian packages) and run this with that Python\n")
    sys.exit(EXIT_SETUP)


class Failure(Exception):
    """An error to report in one line, with its exit status."""

    def __init__(self, message, code=EXIT_FAILED):
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------
# Stubs: tasks_pb2.py and tasks_pb2_grpc.py, generated from tasks.proto (which
# imports no other proto file).

def _has_stubs(directory):
    return all(os.path.isfile(os.path.join(directory, name)) for name in ("tasks_pb2.py", "tasks_pb2_grpc.py"))


def generate_stubs(proto_dir, out_dir):
    """Runs protoc on PROTO_DIR/tasks.proto into OUT_DIR (flat: tasks_pb2.py)."""
    proto = os.path.join(proto_dir, "tasks.proto")
    if not os.path.isfile(proto):
        raise Failure(f"no stubs and no {proto} to generate them from (give --stubs DIR or --proto-dir DIR)",
                      EXIT_SETUP)
    args = [f"--proto_path={proto_dir}", f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", proto]
    try:
        import grpc_tools  # noqa: F401  (python3-grpc-tools)
        command = [sys.executable, "-m", "grpc_tools.protoc"] + args
    except ImportError:
        protoc = shutil.which("protoc")
        plugin = shutil.which("grpc_python_plugin") or "/usr/bin/grpc_python_plugin"
        if not protoc or not os.access(plugin, os.X_OK):
            raise Failure("no stubs, and neither grpc_tools (python3-grpc-tools) nor protoc with "
                          "grpc_python_plugin (protobuf-compiler, protobuf-compiler-grpc) to generate them", EXIT_SETUP)
        command = [protoc, f"--proto_path={proto_dir}", f"--python_out={out_dir}", f"--grpc_out={out_dir}",
                   f"--plugin=protoc-gen-grpc={plugin}", proto]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise Failure(f"generating stubs failed ({' '.join(command)}): {run.stderr.strip()}", EXIT_SETUP)


def load_stubs(stubs_dir, proto_dir):
    """Imports the stubs from STUBS_DIR, $NODEKEEPER_PY_STUBS, this script's
    directory (the build tree's copy sits next to them), or generates them."""
    directory = stubs_dir or os.environ.get("NODEKEEPER_PY_STUBS")
    if directory:
        if not _has_stubs(directory):
            raise Failure(f"{directory} holds no tasks_pb2.py and tasks_pb2_grpc.py", EXIT_SETUP)
    elif _has_stubs(HERE):
        directory = HERE
    else:
        directory = tempfile.mkdtemp(prefix="nk-py-stubs.")
        import atexit
        atexit.register(shutil.rmtree, directory, True)
        generate_stubs(proto_dir, directory)
    sys.path.insert(0, directory)
    try:
        import tasks_pb2
        import tasks_pb2_grpc
    except Exception as error:  # a stale or foreign stub, a protobuf too old
        raise Failure(f"cannot import the stubs in {directory}: {error}", EXIT_SETUP)
    return tasks_pb2, tasks_pb2_grpc


# ---------------------------------------------------------------------------
# Output: text lines, or one JSON object per line (--json).

class Printer:
    def __init__(self, as_json, show_events):
        self.as_json = as_json
        self.show_events = show_events
        self._lock = threading.Lock()
        self._t0 = None  # the first event's timestamp, for relative times

    def emit(self, _type, _text, **fields):
        with self._lock:
            if self.as_json:
                sys.stdout.write(json.dumps(dict(type=_type, **fields)) + "\n")
            else:
                sys.stdout.write(_text + "\n")
            sys.stdout.flush()

    def error(self, message):
        with self._lock:
            if self.as_json:
                sys.stdout.write(json.dumps({"type": "error", "message": message}) + "\n")
                sys.stdout.flush()
            sys.stderr.write(f"{PROG}: {message}\n")
            sys.stderr.flush()

    def relative_ms(self, timestamp_ns):
        if self._t0 is None:
            self._t0 = timestamp_ns
        return (timestamp_ns - self._t0) / 1e6


def status_fields(status):
    return {
        "session": status.session_id, "live": status.live, "held": status.held,
        "parked_workers": status.parked_workers, "not_queued": status.not_queued, "queued": status.queued,
        "running": status.running, "finished": status.finished, "ready": list(status.ready),
        "blocked": list(status.blocked), "frontends": status.frontends,
    }


def status_text(status):
    ready = list(status.ready)
    shown = " ".join(str(t) for t in ready[:5]) + (" ..." if len(ready) > 5 else "")
    return (f"status: session {status.session_id} {'live' if status.live else 'ended'}"
            f"{', held' if status.held else ''}; not queued {status.not_queued}, queued {status.queued}, "
            f"running {status.running}, finished {status.finished}; parked workers {status.parked_workers}; "
            f"ready {len(ready)} [{shown}]; blocked {list(status.blocked)}")


def total_tasks(status):
    return status.not_queued + status.queued + status.running + status.finished


# ---------------------------------------------------------------------------
# The Debug stream: commands in (from a queue), updates out (a reader thread).

class DebugStream:
    def __init__(self, pb, stub, printer, watch_task):
        self.pb = pb
        self.printer = printer
        self.watch_task = watch_task  # a callable returning the task id to watch (or None)
        self._commands = queue.Queue()
        self._cv = threading.Condition()
        self._answers = {}
        self._next_id = 1
        self.ended = None           # (grpc.StatusCode or None, details) once the stream is over
        self.last_status = None
        self.functions = {}         # task id -> function name
        self.started = {}           # task id -> (timestamp_ns, thread, arrival monotonic ns)
        self.finished = {}          # task id -> (timestamp_ns, arrival monotonic ns)
        self._call = stub.Debug(self._requests())
        self._reader = threading.Thread(target=self._read, name="debug-reader", daemon=True)
        self._reader.start()

    def _requests(self):
        while True:
            command = self._commands.get()
            if command is None:
                return
            yield command

    def _read(self):
        code, details = None, "the debug stream ended"
        try:
            for update in self._call:
                if update.HasField("events"):
                    self._events(update.events)
                with self._cv:
                    if update.HasField("status"):
                        self.last_status = update.status
                    if update.command_id:
                        self._answers[update.command_id] = update
                        self._cv.notify_all()
                if not update.command_id and update.HasField("ack") and update.ack.message:
                    self.printer.emit("news", f"news: {update.ack.message}", ok=update.ack.ok,
                                      message=update.ack.message)
        except grpc.RpcError as error:
            code, details = error.code(), error.details() or str(error.code())
        except Exception as error:  # a bug here must not leave the main thread waiting
            code, details = None, f"reading the debug stream failed: {type(error).__name__}: {error}"
            self._call.cancel()
        with self._cv:
            self.ended = (code, details)
            self._cv.notify_all()

    def _events(self, batch):
        arrival = time.monotonic_ns()
        watched = self.watch_task()
        for event in batch.events:
            kind = event.WhichOneof("event")
            ms = self.printer.relative_ms(event.timestamp_ns)
            base = {"event": kind, "timestamp_ns": event.timestamp_ns, "thread": event.thread}
            if kind == "created":
                c = event.created
                self.functions[c.task_id] = c.function
                fields = dict(task=c.task_id, parent=c.parent_id, function=c.function, priority=c.priority)
                text = f"created   task {c.task_id} parent {c.parent_id} {c.function}"
            elif kind == "dependency":
                d = event.dependency
                dep_kind = self.pb.DependenceKind.Name(d.kind).replace("DEPENDENCE_KIND_", "").lower()
                fields = dict(from_task=d.from_task, to_task=d.to_task, address=d.address, kind=dep_kind)
                text = f"depend    task {d.to_task} after {d.from_task} ({dep_kind} {d.address:#x})"
            elif kind in ("queued", "started", "finished", "failed"):
                task = getattr(event, kind).task_id
                fields = dict(task=task, function=self.functions.get(task, ""))
                text = f"{kind:<9} task {task} {self.functions.get(task, '?')}"
                if kind == "started":
                    self.started.setdefault(task, (event.timestamp_ns, event.thread, arrival))
                elif kind == "finished":
                    self.finished.setdefault(task, (event.timestamp_ns, arrival))
                elif kind == "failed":
                    fields["reason"] = event.failed.reason
                    text += f": {event.failed.reason}"
                if task == watched:
                    fields["watched"] = True
                    text += "   <== the blocked task"
            elif kind == "sync":
                s = event.sync
                sync_kind = self.pb.TaskSync.Kind.Name(s.kind).replace("KIND_", "").lower()
                fields = dict(kind=sync_kind, task=s.task_id, end=s.end)
                text = f"{sync_kind:<9} {'end' if s.end else 'begin'} in task {s.task_id}"
            elif kind == "region":
                fields = dict(end=event.region.end, team_size=event.region.team_size)
                text = f"region    {'end' if event.region.end else 'begin'} team {event.region.team_size}"
            else:
                continue
            if self.printer.show_events:
                self.printer.emit("event", f"[{ms:10.3f} ms] thread {event.thread:<3} {text}", **base, **fields)

    def call(self, timeout_s=10.0, **action):
        """Sends a DebugCommand with ACTION (one field of its oneof) and
        returns the DebugUpdate that answers it."""
        with self._cv:
            if self.ended:
                raise StreamEnded(*self.ended)
            command_id = self._next_id
            self._next_id += 1
        self._commands.put(self.pb.DebugCommand(command_id=command_id, **action))
        deadline = time.monotonic() + timeout_s
        with self._cv:
            while command_id not in self._answers and not self.ended:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"no answer from nodekeeperd within {timeout_s:g} s", EXIT_UNREACHABLE)
                self._cv.wait(left)
            if command_id not in self._answers:
                raise StreamEnded(*self.ended)
            return self._answers.pop(command_id)

    def close(self):
        self._commands.put(None)  # half-close: the daemon detaches us and ends the stream
        self._reader.join(2.0)
        if self._reader.is_alive():
            self._call.cancel()
            self._reader.join(2.0)


class StreamEnded(Failure):
    def __init__(self, code, details):
        exit_code = {grpc.StatusCode.PERMISSION_DENIED: EXIT_PERMISSION,
                     grpc.StatusCode.NOT_FOUND: EXIT_NO_SESSION,
                     grpc.StatusCode.UNAVAILABLE: EXIT_UNREACHABLE}.get(code, EXIT_FAILED)
        prefix = "permission denied: " if exit_code == EXIT_PERMISSION else ""
        name = f" ({code.name})" if code else ""
        super().__init__(f"{prefix}{details}{name}", exit_code)


def rpc_failure(error, what, socket_path):
    code = error.code()
    details = error.details() or code.name
    if code == grpc.StatusCode.PERMISSION_DENIED:
        return Failure(f"permission denied: {what}: {details}", EXIT_PERMISSION)
    if code == grpc.StatusCode.UNAVAILABLE:
        return Failure(f"cannot reach nodekeeperd at {socket_path}: {details}", EXIT_UNREACHABLE)
    if code == grpc.StatusCode.NOT_FOUND:
        return Failure(f"{what}: {details}", EXIT_NO_SESSION)
    return Failure(f"{what}: {details} ({code.name})")


# ---------------------------------------------------------------------------

def connect(socket_path, timeout_s):
    if not os.path.exists(socket_path):
        raise Failure(f"no nodekeeperd socket at {socket_path} (is the daemon running? --socket, "
                      "$NODEKEEPER_SOCKET)", EXIT_UNREACHABLE)
    if not os.access(socket_path, os.R_OK | os.W_OK):
        raise Failure(f"permission denied: cannot connect to {socket_path} (not readable and writable "
                      "for this user)", EXIT_PERMISSION)
    channel = grpc.insecure_channel("unix:" + socket_path)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout_s)
    except grpc.FutureTimeoutError:
        channel.close()
        raise Failure(f"cannot reach nodekeeperd at {socket_path} within {timeout_s:g} s (is it running?)",
                      EXIT_UNREACHABLE)
    return channel


def resolve_session(pb, stub, args):
    def sessions():
        try:
            return stub.ListSessions(pb.ListSessionsRequest(), timeout=10).sessions
        except grpc.RpcError as error:
            raise rpc_failure(error, "ListSessions", args.socket)

    if args.session is not None:
        return args.session
    deadline = time.monotonic() + args.wait_s
    foreign = False
    while True:
        live = [s.session_id for s in sessions() if s.pid == args.pid and s.live]
        if live:
            return max(live)
        try:
            os.kill(args.pid, 0)
        except ProcessLookupError:
            raise Failure(f"no live task session of pid {args.pid}, and that process is gone", EXIT_NO_SESSION)
        except PermissionError:
            foreign = True  # another user's: it exists, but ListSessions shows it to its owner and admins only
        if time.monotonic() >= deadline:
            if foreign:
                raise Failure(f"permission denied: pid {args.pid} is another user's process; only its owner or an "
                              "admin (root, group nodekeeper) sees and debugs its task sessions", EXIT_PERMISSION)
            raise Failure(f"no live task session of pid {args.pid} after {args.wait_s:g} s (does it run with "
                          f"OMP_TOOL_LIBRARIES=libnodekeeper.so NODEKEEPER_TASKS=lossless and "
                          f"NODEKEEPER_SOCKET={args.socket}?)", EXIT_NO_SESSION)
        time.sleep(0.05)


def ack_line(printer, what, update):
    ack = update.ack
    latency_ms = ack.latency_ns / 1e6
    fields = dict(command=what, ok=ack.ok, message=ack.message, latency_ns=ack.latency_ns)
    effect_ns = getattr(ack, "effect_ns", 0)  # newer daemons: when it took effect (CLOCK_MONOTONIC)
    if effect_ns:
        fields["effect_ns"] = effect_ns
    printer.emit("ack", f"ack {what}: {'ok' if ack.ok else 'REFUSED'}: {ack.message or '-'} "
                        f"(latency {latency_ms:.3f} ms)", **fields)
    return ack.ok


def run(args, printer):
    pb, pb_grpc = load_stubs(args.stubs, args.proto_dir)
    channel = connect(args.socket, args.connect_timeout_s)
    stub = pb_grpc.TasksServiceStub(channel)
    session = resolve_session(pb, stub, args)

    target = {"id": args.block_task}
    stream = DebugStream(pb, stub, printer, lambda: target["id"])
    blocked = False
    try:
        try:
            hello = stream.call(attach=pb.Attach(session_id=session, events=True, grace_s=args.grace_s))
        except StreamEnded as ended:
            raise Failure(f"cannot attach to session {session}: {ended}", ended.code)
        if not hello.ack.ok:
            raise Failure(f"attach to session {session} refused: {hello.ack.message}")
        printer.emit("attached", hello.ack.message, session=session, message=hello.ack.message)

        first = stream.call(status=pb.Empty()).status
        printer.emit("status", status_text(first), **status_fields(first))
        if not first.live:
            raise Failure(f"session {session} has ended: nothing to block")
        if target["id"] is None:
            ready = list(first.ready)
            if args.block < 1 or args.block > len(ready):
                raise Failure(f"--block {args.block}: the first status lists {len(ready)} ready task(s)")
            target["id"] = ready[args.block - 1]
        task = target["id"]
        if task in stream.started:
            raise Failure(f"task {task} has already started: nothing to block")

        # Block it.
        answer = stream.call(block=pb.TaskBlock(task_ids=[task], blocked=True))
        if not ack_line(printer, f"block {task}", answer):
            raise Failure(f"block {task} refused: {answer.ack.message}")
        blocked = True
        finished_at_block = answer.status.finished if answer.HasField("status") else first.finished
        if task in stream.started:
            raise Failure(f"task {task} started before the block took effect")
        if args.cont:
            if not ack_line(printer, "continue", stream.call(continue_all=pb.Empty())):
                raise Failure("continue refused")
        elif first.held:
            printer.emit("note", "note: the program is held (break): no task starts without --continue",
                         message="held")

        # While blocked: the task must not start; the others run on.
        block_start = time.monotonic()
        status = first
        last_print = 0.0
        started_while_blocked = False
        while time.monotonic() - block_start < args.unblock_after_s:
            status = stream.call(status=pb.Empty()).status
            if task in stream.started:
                started_while_blocked = True
            if task not in status.blocked and status.live:
                printer.emit("warning", f"warning: task {task} is missing from status.blocked", task=task)
            now = time.monotonic()
            if now - last_print >= 0.25:
                printer.emit("poll", f"blocked {now - block_start:5.2f} s: " + status_text(status),
                             phase="blocked", elapsed_s=round(now - block_start, 3), **status_fields(status))
                last_print = now
            if not status.live:
                break
            time.sleep(0.05)
        if task in stream.started:
            started_while_blocked = True
        others_finished = status.finished - finished_at_block
        blocked_for_s = time.monotonic() - block_start

        def verdict(ok, why, start=None, unblock_ns=None):
            after_ms = None if start is None or unblock_ns is None else round((start[0] - unblock_ns) / 1e6, 3)
            printer.emit("result", ("PASS: " if ok else "FAIL: ") + why, ok=ok, task=task,
                         function=stream.functions.get(task, ""), message=why, blocked_for_s=round(blocked_for_s, 3),
                         others_finished_while_blocked=others_finished, started_while_blocked=started_while_blocked,
                         started_after_unblock_ms=after_ms, finished=task in stream.finished)
            return EXIT_OK if ok else EXIT_FAILED

        printer.emit("blocked", f"task {task} blocked for {blocked_for_s:.2f} s: "
                                f"{'STARTED while blocked' if started_while_blocked else 'did not start'}; "
                                f"{others_finished} other task(s) finished meanwhile",
                     task=task, blocked_for_s=round(blocked_for_s, 3), started=started_while_blocked,
                     others_finished=others_finished)
        if started_while_blocked:
            return verdict(False, f"task {task} started while it was blocked")
        if not status.live:
            blocked = False
            return verdict(False, f"the program ended while task {task} was blocked, and it never started")

        # Unblock it, and wait for it to run.
        unblock_ns = time.monotonic_ns()
        answer = stream.call(block=pb.TaskBlock(task_ids=[task], blocked=False))
        ack_line(printer, f"unblock {task}", answer)
        blocked = not answer.ack.ok
        if blocked:
            raise Failure(f"unblock {task} refused: {answer.ack.message}")

        deadline = time.monotonic() + args.finish_timeout_s
        while True:
            try:
                status = stream.call(status=pb.Empty()).status
            except StreamEnded:
                break
            if status.finished >= total_tasks(status) or not status.live:
                break
            if time.monotonic() >= deadline:
                printer.emit("warning", f"warning: not all tasks finished within {args.finish_timeout_s:g} s",
                             message="timeout")
                break
            time.sleep(0.05)
        printer.emit("status", status_text(status), **status_fields(status))
        # The events come from the recording a little behind the status.
        event_deadline = time.monotonic() + args.event_wait_s
        while (task not in stream.started or task not in stream.finished) and time.monotonic() < event_deadline:
            time.sleep(0.02)

        # The verdict.
        start = stream.started.get(task)
        if start is None:
            return verdict(False, f"task {task} never started after the unblock")
        if start[2] < unblock_ns:
            return verdict(False, f"task {task} started before the unblock was sent (its event came first)",
                           start, unblock_ns)
        if start[0] < unblock_ns - int(args.clock_slack_ms * 1e6):
            return verdict(False, f"task {task} started {(unblock_ns - start[0]) / 1e6:.3f} ms before the unblock "
                                  "was sent (by its event's timestamp)", start, unblock_ns)
        return verdict(True, f"task {task} did not start while blocked ({blocked_for_s:.2f} s, {others_finished} "
                             f"others finished) and started {(start[0] - unblock_ns) / 1e6:.3f} ms after the unblock "
                             f"on thread {start[1]}", start, unblock_ns)
    finally:
        if blocked and not stream.ended:
            try:  # leave nothing blocked behind
                stream.call(timeout_s=3, block=pb.TaskBlock(task_ids=[target["id"]], blocked=False))
            except Failure:
                pass
        stream.close()
        channel.close()


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="nk_debugger.py",
        description="Attach to a task session of nodekeeperd, print its graph live, block a task, "
                    "check it does not start until unblocked.")
    parser.add_argument("--socket", default=os.environ.get("NODEKEEPER_SOCKET") or "/run/nodekeeper/nodekeeperd.sock",
                        help="nodekeeperd's socket (default $NODEKEEPER_SOCKET or /run/nodekeeper/nodekeeperd.sock)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--session", type=int, help="the task session id ('nodekeeper tasks' lists them)")
    which.add_argument("--pid", type=int, help="the program's pid: its newest live session")
    parser.add_argument("--wait-s", type=float, default=10.0,
                        help="with --pid: seconds to wait for its session to appear (default 10)")
    task = parser.add_mutually_exclusive_group()
    task.add_argument("--block", type=int, default=1, metavar="N",
                      help="block the N-th ready task of the first status (default 1)")
    task.add_argument("--block-task", type=int, metavar="ID", help="block this task id")
    parser.add_argument("--unblock-after-s", type=float, default=2.0, metavar="S",
                        help="unblock it after S seconds (default 2)")
    parser.add_argument("--continue", dest="cont", action="store_true",
                        help="send continue_all after blocking (for a program started held, "
                             "NODEKEEPER_BREAK_AT_START=1)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--no-events", dest="events", action="store_false", help="do not print the task events")
    parser.add_argument("--stubs", help="the directory of tasks_pb2.py and tasks_pb2_grpc.py "
                                        "(default $NODEKEEPER_PY_STUBS, this script's directory, else generated)")
    parser.add_argument("--proto-dir", default=os.environ.get("NODEKEEPER_PROTO_DIR")
                        or os.path.join(HERE, "..", "..", "proto", "nodekeeper", "v1"),
                        help="where tasks.proto is, to generate stubs from")
    parser.add_argument("--clock-slack-ms", type=float, default=2.0,
                        help="how far a TaskStarted timestamp (the app's TSC fitted to CLOCK_MONOTONIC) may "
                             "lie before the unblock and still count as after it (default 2)")
    parser.add_argument("--grace-s", type=int, default=0, help="Attach.grace_s (0: the daemon's default)")
    parser.add_argument("--connect-timeout-s", type=float, default=5.0)
    parser.add_argument("--finish-timeout-s", type=float, default=60.0,
                        help="seconds to wait for the tasks to finish after the unblock (default 60)")
    parser.add_argument("--event-wait-s", type=float, default=5.0,
                        help="seconds to wait for the blocked task's events after that (default 5)")
    args = parser.parse_args(argv)
    if args.unblock_after_s < 0:
        parser.error("--unblock-after-s must not be negative")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    printer = Printer(args.json, args.events)
    # SIGTERM as Ctrl-C: the cleanup unblocks what this frontend blocked.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        return run(args, printer)
    except Failure as failure:
        printer.error(str(failure))
        return failure.code
    except KeyboardInterrupt:
        printer.error("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
