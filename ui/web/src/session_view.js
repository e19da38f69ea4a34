// One session on the page: its graph stream feeds the task and run
// stores; the graph, timeline, details and counts show them.
import { openStream } from './api.js';
import { TaskStore } from './task_store.js';
import { RunStore } from './run_store.js';
import { GraphView } from './graph_view.js';
import { TimelineView } from './timeline_view.js';
import { DetailsPanel } from './details_panel.js';
import { StatusBar } from './status_bar.js';
import { ReplayControl } from './replay_control.js';
import { stateAt } from './replay.js';

export class SessionView {
  constructor(log) {
    this.log = log;
    this.id = null;
    this.stream = null;
    this.selected = null;
    this.replayTime = null;
    this.statusBar = new StatusBar(document.getElementById('counts'), document.getElementById('debug-status'));
    this.replay = new ReplayControl(document.getElementById('replay'), { onTime: (t) => this.showTime(t) });
    this.reset();
    const search = document.getElementById('search');
    search.addEventListener('input', () => this.search(search.value));
    search.addEventListener('keydown', (event) => { if (event.key === 'Enter') this.nextMatch(); });
    document.getElementById('graph-mode').addEventListener('change', (event) => {
      this.graph.mode = event.target.value;
      this.graph.redraw();
    });
    document.getElementById('btn-fit').addEventListener('click', () => {
      this.graph.followGrowth = true;
      this.graph.fit();
      this.graph.redraw();
    });
  }

  reset() {
    this.store = new TaskStore();
    this.runs = new RunStore();
    const stateOf = (task) => this.stateOf(task);
    const select = (task, block) => this.select(task, block);
    if (!this.graph) {
      this.graph = new GraphView(document.getElementById('graph-canvas'), this.store, {
        onSelect: select,
        onHover: (edge, x, y) => this.hover(edge, x, y),
      });
      this.timeline = new TimelineView(document.getElementById('timeline-canvas'), this.runs, this.store, {
        onSelect: (id) => { const task = this.store.tasks.get(id); if (task) { this.select(task); this.graph.centerOn(task); } },
      });
      this.details = new DetailsPanel(document.getElementById('details'), this.store, { onSelect: select, stateOf });
    }
    this.graph.store = this.store;
    this.graph.stateOf = stateOf;
    this.graph.followGrowth = true;
    this.graph.aggregateCache = null;
    this.graph.replaying = false;
    this.graph.selected = null;
    this.graph.matches = new Set();
    this.timeline.runs = this.runs;
    this.timeline.store = this.store;
    this.timeline.from = this.timeline.to = 0;
    this.timeline.cursor = null;
    this.details.store = this.store;
    this.selected = null;
    this.replayTime = null;
    this.matchList = [];
    this.matchIndex = -1;
    this.replay.disable();
    this.details.show(null);
    this.scheduleRefresh();
  }

  stateOf(task) {
    if (this.replayTime === null) return task.state;
    return stateAt(task, this.replayTime, (t) => (this.store.predecessors.get(t.id) || []).map((e) => this.store.tasks.get(e.from)));
  }

  open(id, session) {
    this.close();
    this.id = id;
    this.reset();
    const title = document.getElementById('session-title');
    title.textContent = session ? `session ${id} · ${session.program} (pid ${session.pid})${session.live ? '' : ' · recorded'}` : `session ${id}`;
    document.getElementById('session-error').textContent = '';
    this.live = session ? session.live : true;
    this.stream = openStream(`/api/sessions/${id}/graph`, {
      graph: (data) => this.onGraph(data),
      runs: (data) => { this.runs.apply(data); this.timeline.redraw(); },
      status: (status) => this.statusBar.showStatus(status) || this.onStatus(status),
      news: (data) => this.log.add(data.ok !== false, data.message),
      end: (data) => this.onEnd(data),
      error: (data) => this.refused(data.message),
    }, (reason) => this.refused(reason));
  }

  close() {
    if (this.stream) this.stream.close();
    this.stream = null;
    this.id = null;
  }

  refused(reason) {
    document.getElementById('session-error').textContent = reason;
    this.log.add(false, `session ${this.id}: ${reason}`);
  }

  onGraph(data) {
    this.store.apply(data);
    this.graph.grew();
    if (this.selected) this.details.show(this.selected);
    this.scheduleRefresh();
  }

  onStatus(status) {
    this.graph.blocked = new Set(status.blocked || []);
    this.graph.blockedFunctions = new Set(status.blocked_functions || []);
    this.graph.redraw();
  }

  onEnd(data) {
    this.log.add(true, `session ${this.id}: ${data.reason || 'ended'}`);
    document.getElementById('graph-canvas').dataset.ended = 'true';
    if (!this.live) this.replay.enable(this.store.tasks.values());
    if (this.stream) this.stream.close(); // EventSource would reconnect and replay it all again
  }

  showTime(t) {
    this.replayTime = t;
    this.graph.replaying = true;
    this.timeline.cursor = t;
    this.graph.aggregateCache = null;
    this.graph.redraw();
    this.timeline.redraw();
    if (this.selected) this.details.show(this.selected);
    this.scheduleRefresh();
  }

  // Counts are O(tasks): once per frame at most, however many events came.
  scheduleRefresh() {
    if (this.refreshRequested) return;
    this.refreshRequested = true;
    requestAnimationFrame(() => {
      this.refreshRequested = false;
      let counts;
      if (this.replayTime === null) {
        counts = this.store.countByState();
      } else {
        counts = { not_queued: 0, queued: 0, running: 0, finished: 0 };
        for (const task of this.store.tasks.values()) {
          const state = this.stateOf(task);
          if (state) counts[state]++;
        }
      }
      const edges = this.store.edgeCount;
      this.statusBar.showCounts(counts, this.store.size, edges);
      const canvas = document.getElementById('graph-canvas');
      canvas.dataset.tasks = this.store.size;
      canvas.dataset.layers = this.store.layout.depth;
    });
  }

  select(task, block) {
    this.selected = task || null;
    this.graph.selected = this.selected;
    this.timeline.selected = this.selected ? this.selected.id : null;
    if (block) this.details.showBlock(block); else this.details.show(this.selected);
    this.graph.redraw();
    this.timeline.redraw();
  }

  search(text) {
    this.matchList = this.store.search(text);
    this.matchIndex = -1;
    this.graph.matches = new Set(this.matchList.map((t) => t.id));
    const count = document.getElementById('search-count');
    count.textContent = text.trim() ? `${this.matchList.length} found` : '';
    count.dataset.value = this.matchList.length;
    this.graph.redraw();
  }

  nextMatch() {
    if (!this.matchList.length) return;
    this.matchIndex = (this.matchIndex + 1) % this.matchList.length;
    const task = this.matchList[this.matchIndex];
    if (this.graph.aggregated) this.graph.mode = 'tasks';
    this.select(task);
    this.graph.centerOn(task);
  }

  hover(edge, x, y) {
    const tip = document.getElementById('edge-tip');
    if (!edge) { tip.hidden = true; return; }
    tip.hidden = false;
    tip.style.left = `${x + 12}px`;
    tip.style.top = `${y + 12}px`;
    const deps = (edge.deps || []).map((d) => `${d.kind} ${d.address}`).join('\n') || 'no address';
    tip.textContent = `#${edge.from} → #${edge.to}\n${deps}`;
  }
}
