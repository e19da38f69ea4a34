#!/usr/bin/env python3
"""Holds the layout docs/design.md describes: which folder may include what.

usage: layering_test.py SOURCE_ROOT

Fails, naming file and line, when
- a cli/ or lib/ file includes a daemon/ header,
- lib/ includes a header of a program's folder (daemon, cli, client-lib, pmpi-agent),
- a domain folder of the daemon (anything but daemon/api and daemon/ itself) or lib/
  includes gRPC (grpcpp or a .grpc.pb.h service header),
- a test, fuzzer or benchmark reaches another folder through a relative include,
- the README or the docs point outside the repository or speak of "the seed".
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
# Include prefixes that name a daemon/ header (the daemon's folders are
# included from daemon/, so "faults/x.h" is daemon/faults/x.h).
daemon_prefixes = ("common/", "platform/", "node/", "energy/", "apps/", "tasks/", "faults/", "api/",
                   "daemon.h", "daemon_options.h", "daemon_config.h", "daemon_flag_table.h", "logger.h")
program_prefixes = daemon_prefixes + ("cli/", "src/", "agent")
include = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
problems = []


def sources(folder):
    for path in sorted((root / folder).rglob("*")):
        if path.suffix in (".cc", ".h", ".c") and path.is_file():
            yield path


def includes(path):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        m = include.match(line)
        if m:
            yield number, m.group(1), m.group(2)


def complain(path, number, what):
    problems.append(f"{path.relative_to(root)}:{number}: {what}")


for path in sources("cli"):
    for number, kind, name in includes(path):
        if kind == '"' and name.startswith(daemon_prefixes):
            complain(path, number, f'includes the daemon header "{name}"; shared code belongs in lib/')

for path in sources("lib"):
    for number, kind, name in includes(path):
        if kind == '"' and name.startswith(program_prefixes):
            complain(path, number, f'lib/ includes "{name}", a header of one program')

grpc = re.compile(r"^grpcpp/|\.grpc\.pb\.h$")
domain = ["lib"] + [f"daemon/{d}" for d in ("common", "platform", "node", "energy", "apps", "tasks", "faults")]
for folder in domain:
    for path in sources(folder):
        for number, _, name in includes(path):
            if grpc.search(name):
                complain(path, number, f'{folder} is domain code and includes gRPC ("{name}")')

for folder in ("tests", "bench"):
    for path in sources(folder):
        for number, kind, name in includes(path):
            if kind == '"' and name.startswith("../"):
                complain(path, number, f'reaches "{name}" by a relative path; use the folder\'s dependency object')

stale = re.compile(r"\.\./shared|the seed", re.IGNORECASE)
for path in [root / "README.md"] + sorted((root / "docs").rglob("*.md")):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if stale.search(line):
            complain(path, number, "points outside the repository or says 'the seed'")

for p in problems:
    print(p)
print(f"layering: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
