// The session's task graph as the page knows it: tasks by id, dependence
// edges both ways, the parent's children, and the layout that places each
// task once. Fed by the server's `graph` events; no drawing here.
import { LayeredLayout } from './layered_layout.js';
import { Aggregation } from './aggregate.js';

export const STATES = ['not_queued', 'queued', 'running', 'finished'];

export class TaskStore {
  constructor() {
    this.tasks = new Map();      // id -> task (the server's fields + layer, slot)
    this.successors = new Map(); // id -> [{to, deps}]
    this.predecessors = new Map(); // id -> [{from, deps}]
    this.children = new Map();   // parent id -> [ids]
    this.functions = new Map();  // name -> index (colour), in order of first sight
    this.layout = new LayeredLayout();
    this.aggregation = new Aggregation(); // by layer, function and state, kept as tasks change
    this.edgeCount = 0;
    this.version = 0;            // bumped on every change: views redraw when it moves
    this.minTime = Infinity;
    this.maxTime = 0;
  }

  get size() { return this.tasks.size; }

  // Applies one `graph` event; returns the tasks placed for the first time.
  // The runtime reports no "queued" (OMPT has no such event), so a task is
  // shown queued as DebugStatus counts it: created, not started, and every
  // predecessor finished. That changes when a predecessor finishes or an
  // edge arrives, so those tasks are looked at again too.
  apply({ tasks = [], edges = [] }) {
    const fresh = [];
    const touched = new Set();
    const touch = (task) => {
      if (!task || touched.has(task)) return;
      this.aggregation.remove(task, task.state);
      touched.add(task);
    };
    for (const t of tasks) {
      const known = this.tasks.get(t.id);
      if (known) {
        touch(known);
        Object.assign(known, t);
        known.reported = t.state;
      } else {
        const task = { ...t, reported: t.state, layer: -1, slot: 0 };
        this.tasks.set(t.id, task);
        fresh.push(task);
        touched.add(task);
        if (t.parent) push(this.children, t.parent, t.id);
      }
      if (!this.functions.has(t.function)) this.functions.set(t.function, this.functions.size);
      for (const ns of [t.created_ns, t.start_ns, t.end_ns]) {
        if (ns > 0) { if (ns < this.minTime) this.minTime = ns; if (ns > this.maxTime) this.maxTime = ns; }
      }
    }
    for (const e of edges) {
      this.addEdge(e);
      touch(this.tasks.get(e.to));
    }
    for (const task of [...touched]) {
      if (task.reported !== 'finished') continue;
      for (const e of this.successors.get(task.id) || []) touch(this.tasks.get(e.to));
    }
    // What a task hangs on is placed before it. Ids are not in creation
    // order (each thread numbers its own), so place depth first.
    for (const task of fresh) this.placeWithAnchors(task);
    for (const task of touched) {
      task.state = this.shownState(task);
      this.aggregation.add(task, task.state);
    }
    if (tasks.length || edges.length) this.version++;
    return fresh;
  }

  shownState(task) {
    if (task.reported !== 'not_queued') return task.reported;
    for (const e of this.predecessors.get(task.id) || []) {
      const p = this.tasks.get(e.from);
      if (!p || p.reported !== 'finished') return 'not_queued';
    }
    return 'queued';
  }

  anchorsOf(task) {
    const anchors = (this.predecessors.get(task.id) || []).map((e) => this.tasks.get(e.from));
    return { predecessors: anchors, parent: this.tasks.get(task.parent) };
  }

  placeWithAnchors(root) {
    if (root.layer >= 0) return;
    const stack = [root];
    const pending = new Set([root.id]);
    while (stack.length) {
      const task = stack[stack.length - 1];
      const { predecessors, parent } = this.anchorsOf(task);
      const waiting = [...predecessors, parent].filter((a) => a && a.layer < 0 && !pending.has(a.id));
      if (waiting.length) {
        for (const a of waiting) { pending.add(a.id); stack.push(a); }
        continue;
      }
      stack.pop();
      if (task.layer < 0) this.layout.place(task, predecessors, parent);
    }
  }

  addEdge({ from, to, deps = [] }) {
    const out = this.successors.get(from);
    const same = out && out.find((e) => e.to === to);
    if (same) { same.deps = deps; return; }
    push(this.successors, from, { to, deps });
    this.edgeCount++;
    push(this.predecessors, to, { from, deps });
  }

  functionIndex(name) { return this.functions.get(name) ?? 0; }

  // Tasks whose function contains `text` (case-insensitive), or the task
  // "#ID" names.
  search(text) {
    const query = text.trim();
    if (!query) return [];
    const byId = /^#?(\d+)$/.exec(query);
    if (byId && query.startsWith('#')) {
      const task = this.tasks.get(Number(byId[1]));
      return task ? [task] : [];
    }
    const lower = query.toLowerCase();
    const found = [];
    for (const task of this.tasks.values()) {
      if ((task.function || '').toLowerCase().includes(lower)) found.push(task);
    }
    return found;
  }

  // From the running aggregation: O(layers x functions), not O(tasks).
  countByState() {
    const counts = { not_queued: 0, queued: 0, running: 0, finished: 0 };
    for (const { blocks } of this.aggregation.rows()) {
      for (const block of blocks) for (const state of STATES) counts[state] += block[state];
    }
    return counts;
  }
}

function push(map, key, value) {
  const list = map.get(key);
  if (list) list.push(value); else map.set(key, [value]);
}
