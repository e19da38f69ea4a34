#!/usr/bin/env python3
"""Takes docs/ui.png: the page on kastors_jacobi (a KaStORS-shaped block
Jacobi) stopped by `break` half way, one task selected.

  NK_DAEMON=.. NK_CLI=.. NK_CLIENT_LIB=.. NK_JACOBI=.. take_screenshot.py OUT.png
"""
import sys
import time

from page_harness import Node, env, wait_for


def main(out):
    with Node(ignore_host_load=True) as node:
        program = node.start_program([env('NK_JACOBI'), '4', '5', '150000'], hold=True, threads=4,
                                     extra_env={'NODEKEEPER_POWER_BUDGET_MW': '150000'})
        session = node.session_of(program.pid)['session_id']
        ui = node.start_ui()
        page = node.browser()
        page.driver.set_window_size(1600, 950)
        page.login(ui)
        page.open_session(session)
        wait_for('the held graph', lambda: page.count('tasks') == 160)
        page.command('btn-continue', 'continue:')
        wait_for('a third of the tasks finished', lambda: page.count('finished') >= 55, 120)
        page.command('btn-break', 'break:')
        wait_for('the running tasks to finish', lambda: page.count('running') == 0, 60)
        status = ui.debug_status(session)
        page.select_task(status['ready'][0])
        page.command('btn-gdb', 'gdb ')
        page.click('btn-fit')
        time.sleep(2)
        page.driver.save_screenshot(out)
        page.command('btn-continue', 'continue:')
        program.wait(timeout=120)
        print(f'wrote {out}')


if __name__ == '__main__':
    main(sys.argv[1])
