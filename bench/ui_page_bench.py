#!/usr/bin/env python3
"""The page's cost on big task graphs: headless Chromium opens `nodekeeper ui`
on recorded sessions of 10k and 100k tasks (tests/browser/kastors_jacobi, a
block Jacobi) and measures, side by side:
  load      navigation until the page holds every task and edge (the CLI's counts)
  grow      requestAnimationFrame intervals while the graph streams in
  pan/zoom  rAF intervals while the graph is dragged and wheeled (the page's
            default view: boxes up to 20,000 tasks, then by function and layer;
            the 100k session also with boxes forced)
  heap      performance.memory.usedJSHeapSize (--enable-precise-memory-info)

  NK_DAEMON=.. NK_CLI=.. NK_CLIENT_LIB=.. NK_JACOBI=.. ui_page_bench.py
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'browser'))
from page_harness import Node, env, wait_for  # noqa: E402

# (label, blocks, sweeps): 2 * blocks^2 * sweeps tasks
SESSIONS = [('10k', 10, 50), ('100k', 25, 80)]

RECORD_FRAMES = '''
window.__frames = [];
window.__recording = true;
const tick = (t) => { if (!window.__recording) return; window.__frames.push(t); requestAnimationFrame(tick); };
requestAnimationFrame(tick);
'''

PAN_ZOOM = '''
const done = arguments[arguments.length - 1];
const canvas = document.getElementById('graph-canvas');
const rect = canvas.getBoundingClientRect();
const cx = rect.left + rect.width / 2, cy = rect.top + rect.height / 2;
const frames = [];
let step = 0;
const move = (t) => {
  frames.push(t);
  const phase = step++;
  if (phase < 240) {
    const x = cx + 200 * Math.sin(phase / 15), y = cy + 120 * Math.cos(phase / 20);
    if (phase % 60 === 0) canvas.dispatchEvent(new MouseEvent('mousedown', { clientX: x, clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mousemove', { clientX: x + 3, clientY: y + 3, bubbles: true }));
    if (phase % 60 === 59) window.dispatchEvent(new MouseEvent('mouseup', { clientX: x, clientY: y, bubbles: true }));
    canvas.dispatchEvent(new WheelEvent('wheel', { deltaY: phase % 120 < 60 ? -40 : 40, clientX: x, clientY: y, bubbles: true, cancelable: true }));
    requestAnimationFrame(move);
  } else {
    done(frames);
  }
};
requestAnimationFrame(move);
'''


def intervals(frames):
    gaps = [b - a for a, b in zip(frames, frames[1:])]
    if not gaps:
        return float('nan'), float('nan')
    gaps.sort()
    return statistics.median(gaps), gaps[min(len(gaps) - 1, int(0.95 * len(gaps)))]


def record(node, blocks, sweeps):
    program = node.start_program([env('NK_JACOBI'), str(blocks), str(sweeps)])
    session = node.session_of(program.pid)['session_id']
    output = node.program_output(program, timeout=900)
    tasks = int(output.split('tasks=')[1].split()[0])
    ended = wait_for('the session to end', lambda: next((s for s in node.sessions()
                                                         if s['session_id'] == session and not s['live']), None), 300)
    return session, tasks, ended['edges']


def measure(node, ui, session, tasks, edges, force_boxes=False):
    page = node.browser(['--enable-precise-memory-info'])
    page.driver.set_script_timeout(300)
    page.login(ui)
    page.driver.execute_script(RECORD_FRAMES)
    start = time.monotonic()
    page.driver.execute_script(f"location.hash = 'session={session}'")
    wait_for('every task on the page', lambda: page.count('tasks') == tasks, 600, 0.05)
    try:
        wait_for('every edge on the page', lambda: page.count('edges') == edges, 120, 0.05)
    except AssertionError as error:
        print(f'ui_page_bench: session {session}: {error}', file=sys.stderr)
    load_s = time.monotonic() - start
    edges = page.count('edges')
    grow = intervals(page.driver.execute_script('window.__recording = false; return window.__frames'))
    if force_boxes:
        page.driver.execute_script("const m = document.getElementById('graph-mode'); m.value = 'tasks';"
                                   "m.dispatchEvent(new Event('change'));")
    # The canvas says which view it drew at its next frame.
    mode = page.driver.execute_async_script(
        "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame("
        "() => done(document.getElementById('graph-canvas').dataset.mode)));")
    pan = intervals(page.driver.execute_async_script(PAN_ZOOM))
    heap = page.driver.execute_script('return performance.memory.usedJSHeapSize') / 2**20
    page.driver.quit()
    node.drivers.remove(page.driver)
    return edges, load_s, grow, mode, pan, heap


def main():
    # The emulated node's own load model is not what is measured here.
    with Node(ignore_host_load=True) as node:
        recorded = [(label, *record(node, blocks, sweeps)) for label, blocks, sweeps in SESSIONS]
        ui = node.start_ui()
        rows = []
        for label, session, tasks, edges in recorded:
            rows.append((label, tasks, *measure(node, ui, session, tasks, edges)))
            if tasks > 20000:
                rows.append((label, tasks, *measure(node, ui, session, tasks, edges, force_boxes=True)))
    print('ui_page_bench: the page on recorded sessions (headless Chromium, this machine)')
    print(f'{"session":8} {"tasks":>7} {"edges":>7} {"load s":>7} {"grow ms med/p95":>16} {"view":>9} {"pan/zoom ms med/p95":>20} {"heap MB":>8}')
    for label, tasks, edges, load_s, grow, mode, pan, heap in rows:
        print(f'{label:8} {tasks:7d} {edges:7d} {load_s:7.2f} {grow[0]:7.1f}/{grow[1]:<8.1f} {mode:>9} {pan[0]:9.1f}/{pan[1]:<10.1f} {heap:8.1f}')


if __name__ == '__main__':
    main()
