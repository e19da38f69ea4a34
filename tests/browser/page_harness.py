"""What the browser tests stand on: a real nodekeeperd (emulated node), real
OpenMP programs with the client library, `nodekeeper ui` servers (as root or
as another uid) and headless Chromium driven by selenium.

Paths come from the environment meson sets: NK_DAEMON, NK_CLI, NK_CLIENT_LIB.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

NOBODY = 65534


def env(name):
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f'{name} is not set (meson sets it; run through meson test)')
    return value


def wait_for(what, probe, timeout=90, interval=0.2):
    """Polls probe() until it returns something true; no timing is asserted,
    the timeout only bounds a test that would otherwise hang."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except (StaleElementReferenceException, urllib.error.URLError, ConnectionError):
            last = None
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f'timed out after {timeout} s waiting for {what} (last seen: {last!r})')


class UiServer:
    """One `nodekeeper ui`: its URL, token and an API client that carries the
    token as a Bearer header (the test's own path to the same data)."""

    def __init__(self, process, url):
        self.process = process
        self.url = url
        base, _, self.token = url.partition('/?token=')
        self.base = base
        self.port = int(base.rsplit(':', 1)[1])

    def request(self, path, body=None, token=None, host=None):
        headers = {'Authorization': f'Bearer {self.token if token is None else token}'}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['Content-Type'] = 'application/json'
        if host:
            headers['Host'] = host
        request = urllib.request.Request(self.base + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def api(self, path, body=None):
        status, text = self.request(path, body)
        if status != 200:
            raise AssertionError(f'{path}: HTTP {status}: {text}')
        return json.loads(text)

    def debug_status(self, session):
        return self.api(f'/api/sessions/{session}/command', {'action': 'status'})['status']


class Node:
    """A daemon on an emulated node in a temporary directory, and everything
    the test starts against it (ended in close())."""

    def __init__(self, ignore_host_load=False):
        self.dir = tempfile.mkdtemp(prefix='nk-browser-')
        os.chmod(self.dir, 0o755)  # the second user's CLI reaches the socket
        self.socket = os.path.join(self.dir, 'nodekeeperd.sock')
        argv = [env('NK_DAEMON'), '--emulate', '--socket', self.socket, '--state-dir', self.dir,
                '--config', '/dev/null']
        if ignore_host_load:
            argv.append('--emulate-ignore-host-load')
        self.log = open(os.path.join(self.dir, 'daemon.log'), 'w')
        self.daemon = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        self.children = []
        self.drivers = []
        wait_for('the daemon socket', lambda: os.path.exists(self.socket) or self.daemon.poll() is not None, 30)
        if self.daemon.poll() is not None:
            raise AssertionError('nodekeeperd exited: ' + open(os.path.join(self.dir, 'daemon.log')).read())

    def cli_path(self, uid=None):
        """The CLI another user can run: the build tree may be closed to them
        (a clone in a 0700 mktemp directory), so they run a copy."""
        if uid is None:
            return env('NK_CLI')
        copy = os.path.join(self.dir, 'nodekeeper')
        if not os.path.exists(copy):
            shutil.copy(env('NK_CLI'), copy)
            os.chmod(copy, 0o755)
        return copy

    def cli(self, *args, uid=None):
        result = subprocess.run([self.cli_path(uid), '--socket', self.socket, *args], capture_output=True, text=True,
                                timeout=60, user=uid)
        if result.returncode != 0:
            raise AssertionError(f'nodekeeper {" ".join(args)}: {result.stderr.strip()}')
        return result.stdout

    def sessions(self, uid=None):
        return json.loads(self.cli('tasks', '--json', uid=uid)).get('sessions', [])

    def session_of(self, pid):
        return wait_for(f'the session of pid {pid}',
                        lambda: next((s for s in self.sessions() if s['pid'] == pid), None), 60)

    def node_power(self):
        status = json.loads(self.cli('status', '--json'))
        return sum(p['power_w'] for p in status['packages'])

    def start_program(self, argv, hold=False, threads=2, extra_env=None):
        environment = dict(os.environ, NODEKEEPER_SOCKET=self.socket, OMP_TOOL_LIBRARIES=env('NK_CLIENT_LIB'),
                           NODEKEEPER_TASKS='lossless', OMP_NUM_THREADS=str(threads))
        if hold:
            environment['NODEKEEPER_BREAK_AT_START'] = '1'
        environment.update(extra_env or {})
        out = open(os.path.join(self.dir, f'program{len(self.children)}.out'), 'w+')
        process = subprocess.Popen(argv, env=environment, stdout=out, stderr=subprocess.STDOUT)
        process.output = out
        self.children.append(process)
        return process

    def program_output(self, process, timeout=120):
        process.wait(timeout=timeout)
        process.output.seek(0)
        return process.output.read()

    def watch_held(self, argv):
        """`argv` started held at its first task, and root's page open on its
        session: (program, session id, ui server, page)."""
        program = self.start_program(argv, hold=True)
        session = self.session_of(program.pid)['session_id']
        ui = self.start_ui()
        page = self.browser()
        page.login(ui)
        page.open_session(session)
        return program, session, ui, page

    def start_ui(self, uid=None):
        process = subprocess.Popen([self.cli_path(uid), '--socket', self.socket, 'ui', '--port', '0', '--no-browser'],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, user=uid)
        self.children.append(process)
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline().strip() if ready else ''
        if not line.startswith('http://127.0.0.1:'):
            process.kill()
            raise AssertionError(f'nodekeeper ui printed {line!r}, stderr: {process.stderr.read()}')
        return UiServer(process, line)

    def browser(self, extra_args=()):
        options = webdriver.ChromeOptions()
        profile = tempfile.mkdtemp(prefix='nk-chromium-', dir=self.dir)
        for arg in ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                    '--disable-background-networking', '--disable-component-update', '--disable-sync',
                    '--disable-dev-shm-usage', f'--user-data-dir={profile}', '--window-size=1500,950', *extra_args]:
            options.add_argument(arg)
        options.binary_location = '/usr/bin/chromium'
        driver = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=options)
        driver.set_page_load_timeout(60)
        self.drivers.append(driver)
        return Page(driver)

    def close(self):
        for driver in self.drivers:
            try:
                driver.quit()
            except WebDriverException:
                pass
        for process in self.children + [self.daemon]:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None and os.path.exists(os.path.join(self.dir, 'daemon.log')):
            print('--- daemon.log (tail) ---')
            print(open(os.path.join(self.dir, 'daemon.log')).read()[-3000:])
        self.close()


class Page:
    """The page as the user sees it, read through its ids and data attributes."""

    def __init__(self, driver):
        self.driver = driver

    def login(self, ui, host='127.0.0.1'):
        url = ui.url if host == '127.0.0.1' else ui.url.replace('127.0.0.1', host)
        self.driver.get(url)
        self.base = ui.base.replace('127.0.0.1', host)
        wait_for('the page to load', lambda: self.driver.find_elements(By.ID, 'whoami') and self.text('whoami'), 60)

    def open_session(self, session):
        self.driver.get(f'{self.base}/#session={session}')
        wait_for('the session view', lambda: self.element('session').is_displayed(), 60)

    def element(self, id_):
        return self.driver.find_element(By.ID, id_)

    def text(self, id_):
        return self.element(id_).text

    def data(self, id_, name):
        """A data attribute, read in one script: the page rebuilds its
        counters, so an element handle could go stale between two calls."""
        return self.driver.execute_script(
            'const e = document.getElementById(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;',
            id_, f'data-{name}')

    def count(self, state):
        value = self.data(f'count-{state}', 'value')
        return int(value) if value is not None else -1

    def click(self, id_):
        self.element(id_).click()

    def set_value(self, id_, value):
        field = self.element(id_)
        field.clear()
        field.send_keys(str(value))

    def select_task(self, task):
        self.set_value('search', f'#{task}')
        self.element('search').send_keys(Keys.ENTER)
        wait_for(f'task {task} in the details', lambda: self.data('details', 'task-id') == str(task), 30)

    def messages(self):
        """The message log, newest first: (ok, text)."""
        items = self.driver.find_elements(By.CSS_SELECTOR, '#message-log li')
        return [(item.get_attribute('data-ok') == 'true', item.text) for item in items]

    def command(self, button, label, expect_ok=True):
        """Clicks a control and waits for its answer (the log line starting
        with `label`, e.g. 'step 1:'), which must be an acknowledgement or,
        with expect_ok=False, a refusal."""
        before = len(self.messages())

        def answer():
            messages = self.messages()
            fresh = messages[:len(messages) - before]
            return next(((ok, text) for ok, text in fresh if label in text), None)

        self.click(button)
        ok, text = wait_for(f'the answer to {label}', answer, 30)
        if ok != expect_ok:
            raise AssertionError(f'{label}: expected {"ok" if expect_ok else "a refusal"}, the log says {text!r}')
        return text
