// The debugger's controls. Each sends one command and logs the daemon's
// acknowledgement or refusal; nothing is assumed to have happened until
// the answer says so.
import { postCommand } from './api.js';

export class Controls {
  constructor(root, log, { session, selected, onStatus }) {
    this.root = root;
    this.log = log;
    this.session = session;   // () -> session id or null
    this.selected = selected; // () -> selected task or null
    this.onStatus = onStatus;
    this.wire();
  }

  $(id) { return this.root.querySelector(`#${id}`); }

  async send(command, describe) {
    const id = this.session();
    if (id === null) { this.log.add(false, 'pick a session first'); return null; }
    let answer;
    try {
      answer = await postCommand(id, command);
    } catch (error) {
      answer = { ok: false, message: String(error.message || error) };
    }
    const latency = answer.latency_ns ? ` (${(answer.latency_ns / 1e6).toFixed(1)} ms)` : '';
    this.log.add(answer.ok, `${describe}: ${answer.message || (answer.ok ? 'done' : 'refused')}${latency}`);
    if (answer.status) this.onStatus(answer.status);
    return answer;
  }

  needTask(what) {
    const task = this.selected();
    if (!task) this.log.add(false, `${what}: select a task first`);
    return task;
  }

  wire() {
    const on = (id, fn) => this.$(id).addEventListener('click', fn);
    on('btn-break', () => this.send({ action: 'break' }, 'break'));
    on('btn-continue', () => this.send({ action: 'continue' }, 'continue'));
    on('btn-step', () => {
      const n = parseInt(this.$('step-count').value, 10);
      this.send({ action: 'step', tasks: n }, `step ${this.$('step-count').value}`);
    });
    for (const verb of ['block', 'unblock']) {
      on(`btn-${verb}`, () => {
        const task = this.needTask(verb);
        if (task) this.send({ action: verb, task: task.id }, `${verb} #${task.id}`);
      });
      on(`btn-${verb}-function`, () => {
        const task = this.needTask(`${verb} function`);
        if (task) this.send({ action: `${verb}_function`, function: task.function }, `${verb} function ${task.function}`);
      });
    }
    on('btn-priority', () => {
      const task = this.needTask('priority');
      const level = parseInt(this.$('priority-level').value, 10);
      if (task) this.send({ action: 'priority', task: task.id, level }, `priority #${task.id} ${this.$('priority-level').value}`);
    });
    this.$('pause-on-enabled').addEventListener('change', () => {
      const event = this.$('pause-on-event').value, enabled = this.$('pause-on-enabled').checked;
      this.send({ action: 'pause_on', event, enabled }, `pause on ${event} ${enabled ? 'on' : 'off'}`);
    });
    on('btn-threads', () => {
      const count = parseInt(this.$('thread-count').value, 10);
      this.send({ action: 'threads', count }, `threads ${this.$('thread-count').value}`);
    });
    on('btn-status', () => this.send({ action: 'status' }, 'status'));
    on('btn-gdb', async () => {
      const task = this.needTask('gdb');
      if (!task) return;
      const answer = await this.send({ action: 'gdb', function: task.function }, `gdb ${task.function}`);
      if (answer && answer.ok && answer.command) this.$('gdb-command').textContent = answer.command;
    });
  }
}
