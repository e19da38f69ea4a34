#!/usr/bin/env python3
"""Print the ninja targets (paths relative to BUILD_DIR) that the tests of
one suite need, so that a build can make only those: `meson test` would
build everything first, which a sanitizer build on CI cannot afford."""
import json
import os
import subprocess
import sys


def introspect(build_dir, what):
    out = subprocess.run(['meson', 'introspect', build_dir, '--' + what],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: suite_targets.py BUILD_DIR SUITE')
    build_dir, suite = os.path.abspath(sys.argv[1]), sys.argv[2]
    files_of = {t['id']: t['filename'] for t in introspect(build_dir, 'targets')}
    wanted = set()
    for test in introspect(build_dir, 'tests'):
        if not any(suite in (s, s.split(':')[-1]) for s in test['suite']):
            continue
        for target_id in test['depends']:
            wanted.update(files_of.get(target_id, []))
    if not wanted:
        sys.exit(f'suite_targets.py: no test in suite {suite!r}')
    for path in sorted(wanted):
        print(os.path.relpath(path, build_dir))


if __name__ == '__main__':
    main()
