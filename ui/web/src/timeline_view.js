// A row per thread: task runs in their function's colour, taskwaits and
// barriers in greys. Click a run to select its task in the graph.
import { functionColour, RUN_COLOUR } from './colours.js';
import { firstEndingAfter } from './run_store.js';

const ROW = 18, LABEL = 56;

export class TimelineView {
  constructor(canvas, runs, store, { onSelect }) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.runs = runs;
    this.store = store;
    this.onSelect = onSelect;
    this.from = 0; this.to = 0; // shown time range; 0,0: everything
    this.selected = null;
    this.cursor = null;
    this.frameRequested = false;
    this.listen();
    new ResizeObserver(() => this.resize()).observe(canvas);
  }

  resize() {
    const ratio = window.devicePixelRatio || 1;
    const rect = this.canvas.getBoundingClientRect();
    this.canvas.width = Math.max(1, Math.round(rect.width * ratio));
    this.canvas.height = Math.max(1, Math.round(rect.height * ratio));
    this.redraw();
  }

  redraw() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => { this.frameRequested = false; this.draw(); });
  }

  range() {
    if (this.to > this.from) return [this.from, this.to];
    const lo = Math.min(this.runs.minTime, this.store.minTime);
    const hi = Math.max(this.runs.maxTime, this.store.maxTime);
    return Number.isFinite(lo) && hi > lo ? [lo, hi] : [0, 1];
  }

  draw() {
    const ratio = window.devicePixelRatio || 1;
    const { ctx } = this;
    const width = this.canvas.width / ratio;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, this.canvas.height / ratio);
    const [from, to] = this.range();
    const perPx = (to - from) / Math.max(1, width - LABEL);
    const threads = this.runs.threadIds();
    this.canvas.dataset.threads = threads.length;
    this.canvas.dataset.runs = this.runs.count;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    threads.forEach((thread, row) => {
      const y = row * ROW + 2;
      ctx.fillStyle = '#333';
      ctx.fillText(`thread ${thread}`, 2, y + ROW / 2 - 1);
      const list = this.runs.threads.get(thread);
      // Runs that start before `from` may still reach into view: back up a little.
      let i = Math.max(0, firstEndingAfter(list, from) - 64);
      let lastPx = -1;
      for (; i < list.length && list[i].start_ns <= to; i++) {
        const run = list[i];
        if (run.end_ns < from) continue;
        const x0 = LABEL + (run.start_ns - from) / perPx;
        const x1 = Math.max(x0 + 1, LABEL + (run.end_ns - from) / perPx);
        if (x1 < lastPx + 0.5 && run.task !== this.selected) continue; // same pixel as the last one
        lastPx = x1;
        const task = run.kind === 'task' ? this.store.tasks.get(run.task) : null;
        ctx.fillStyle = run.kind === 'task'
          ? functionColour(task ? this.store.functionIndex(task.function) : 0)
          : RUN_COLOUR[run.kind] || '#868e96';
        const top = run.kind === 'task' ? y : y + ROW / 3;
        const height = run.kind === 'task' ? ROW - 4 : (ROW - 4) / 3;
        ctx.fillRect(Math.max(LABEL, x0), top, Math.min(width, x1) - Math.max(LABEL, x0), height);
        if (run.task === this.selected && run.kind === 'task') {
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 2;
          ctx.strokeRect(x0, top, x1 - x0, height);
        }
      }
    });
    if (this.cursor !== null) {
      const x = LABEL + (this.cursor - from) / perPx;
      ctx.strokeStyle = '#c92a2a';
      ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, threads.length * ROW + 4); ctx.stroke();
    }
  }

  runAt(px, py) {
    const threads = this.runs.threadIds();
    const thread = threads[Math.floor((py - 2) / ROW)];
    if (thread === undefined || px < LABEL) return null;
    const [from, to] = this.range();
    const width = this.canvas.getBoundingClientRect().width;
    const perPx = (to - from) / Math.max(1, width - LABEL);
    const t = from + (px - LABEL) * perPx, slack = 2 * perPx;
    const list = this.runs.threads.get(thread);
    let best = null;
    for (let i = Math.max(0, firstEndingAfter(list, t + slack) - 1); i >= 0 && i >= firstEndingAfter(list, t + slack) - 256; i--) {
      const run = list[i];
      if (run.kind === 'task' && run.start_ns - slack <= t && run.end_ns + slack >= t) { best = run; break; }
    }
    return best;
  }

  listen() {
    const canvas = this.canvas;
    canvas.addEventListener('click', (event) => {
      const rect = canvas.getBoundingClientRect();
      const run = this.runAt(event.clientX - rect.left, event.clientY - rect.top);
      if (run) this.onSelect(run.task);
    });
    canvas.addEventListener('wheel', (event) => {
      event.preventDefault();
      const rect = canvas.getBoundingClientRect();
      const [from, to] = this.range();
      const width = rect.width - LABEL;
      const at = from + ((event.clientX - rect.left - LABEL) / width) * (to - from);
      const factor = Math.exp(event.deltaY * 0.0015);
      this.from = at - (at - from) * factor;
      this.to = at + (to - at) * factor;
      this.redraw();
    }, { passive: false });
    canvas.addEventListener('dblclick', () => { this.from = this.to = 0; this.redraw(); });
  }
}
