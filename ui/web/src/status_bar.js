// The session's counts: the page's own (from the graph it holds) and the
// daemon's DebugStatus (held, steps left, blocked, stall).
import { el, clear } from './dom.js';
import { STATES } from './task_store.js';

export class StatusBar {
  constructor(counts, debug) {
    this.counts = counts;
    this.debug = debug;
  }

  showCounts(counts, total, edges) {
    clear(this.counts);
    this.counts.dataset.tasks = total;
    this.counts.append(el('span', { id: 'count-tasks', 'data-value': total }, `${total} tasks`),
      el('span', { id: 'count-edges', 'data-value': edges }, `${edges} edges`));
    for (const state of STATES) {
      this.counts.append(el('span', { id: `count-${state}`, 'data-value': counts[state] || 0, class: `state-${state}` },
        `${state.replace('_', ' ')} ${counts[state] || 0}`));
    }
  }

  showStatus(status) {
    clear(this.debug);
    if (!status) return;
    this.debug.dataset.held = status.held ? 'true' : 'false';
    const parts = [
      status.held ? 'held (break)' : 'running freely',
      status.steps_left ? `${status.steps_left} steps left` : null,
      `parked workers ${status.parked_workers || 0}`,
      `ready ${status.ready_total || 0}`,
      status.blocked_total ? `blocked tasks ${status.blocked_total}` : null,
      (status.blocked_functions || []).length ? `blocked functions: ${status.blocked_functions.join(', ')}` : null,
      `frontends ${status.frontends || 0}`,
    ].filter(Boolean);
    this.debug.append(el('span', {}, parts.join(' · ')));
    if (status.stall) this.debug.append(el('div', { class: 'stall' }, status.stall));
  }
}
