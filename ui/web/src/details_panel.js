// A task's details: function and source line, parent, predecessors and
// successors (with the addresses they share), times and state.
import { el, clear } from './dom.js';

export class DetailsPanel {
  constructor(root, store, { onSelect, stateOf }) {
    this.root = root;
    this.store = store;
    this.onSelect = onSelect;
    this.stateOf = stateOf;
  }

  show(task) {
    const root = this.root;
    clear(root);
    if (!task) {
      root.dataset.taskId = '';
      root.dataset.state = '';
      root.append(el('p', { class: 'hint' }, 'Click a task in the graph or the timeline.'));
      return;
    }
    const state = this.stateOf(task) || 'not created yet';
    root.dataset.taskId = task.id;
    root.dataset.state = state;
    const [, name, source] = /^(.*?)(?: \((.*)\))?$/.exec(task.function || '') || [];
    const zero = Number.isFinite(this.store.minTime) ? this.store.minTime : 0;
    const time = (ns) => (ns ? `${((ns - zero) / 1e6).toFixed(3)} ms` : '—');
    const link = (id, extra) => {
      const a = el('a', { href: '#', 'data-task': id }, `#${id}`);
      a.addEventListener('click', (event) => { event.preventDefault(); this.onSelect(this.store.tasks.get(id)); });
      return extra ? [a, ` ${extra}`] : [a];
    };
    const deps = (list) => list.map((d) => `${d.kind} ${d.address}`).join(', ');
    const rows = [
      ['task', `#${task.id}`],
      ['function', name || '?'],
      ['source', source || 'unknown'],
      ['state', el('span', { id: 'detail-state', class: `state-${state}` }, state)],
      ['thread', task.thread ? String(task.thread) : '—'],
      ['parent', task.parent ? link(task.parent) : '—'],
      ['created', time(task.created_ns)],
      ['started', time(task.start_ns)],
      ['ended', time(task.end_ns)],
      ['ran for', task.start_ns && task.end_ns ? `${((task.end_ns - task.start_ns) / 1e3).toFixed(1)} µs` : '—'],
    ];
    const table = el('table', {});
    for (const [key, value] of rows) table.append(el('tr', {}, el('th', {}, key), el('td', {}, ...[].concat(value))));
    root.append(table);
    const section = (title, edges, field) => {
      const list = el('ul', { 'data-test': title });
      for (const e of (edges || []).slice(0, 50)) list.append(el('li', {}, ...link(e[field], deps(e.deps))));
      if ((edges || []).length > 50) list.append(el('li', {}, `… ${edges.length - 50} more`));
      root.append(el('h4', {}, `${title} (${(edges || []).length})`), list);
    };
    section('predecessors', this.store.predecessors.get(task.id), 'from');
    section('successors', this.store.successors.get(task.id), 'to');
    const children = this.store.children.get(task.id) || [];
    if (children.length) root.append(el('p', {}, `${children.length} child task${children.length > 1 ? 's' : ''}`));
  }

  showBlock(block) {
    clear(this.root);
    this.root.dataset.taskId = '';
    this.root.append(el('p', {}, `${block.function}: ${block.total} tasks in this layer — finished ${block.finished}, ` +
      `running ${block.running}, queued ${block.queued}, not queued ${block.not_queued}. ` +
      'Zoom in with "Boxes" to see them one by one.'));
  }
}
